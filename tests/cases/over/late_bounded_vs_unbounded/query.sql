-- Bounded OVER drops only rows at or behind the last time *its partition* fired: h1 @ 10:00:03
-- arrives behind the watermark (10:00:05, set by h2) but h1 last fired at 10:00:01, so it is
-- kept; h2 @ 10:00:04 is behind h2's own firing at 10:00:05 and is dropped.
SELECT host, ms, ts,
  SUM(ms) OVER (PARTITION BY host ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s2
FROM pings
