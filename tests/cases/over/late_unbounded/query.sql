-- Unbounded OVER drops every row at or behind the watermark (h1 @ 10:00:03 too), unlike the
-- bounded frame of late_bounded_vs_unbounded on the same input.
SELECT host, ms, ts,
  SUM(ms) OVER (PARTITION BY host ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
    AS run_sum
FROM pings
