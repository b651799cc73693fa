-- Every aggregate over ROWS 3 PRECEDING with NULLs (skipped; an all-NULL window gives NULL,
-- COUNT 0), out-of-order rows within the 2 s delay, and one row (a @ 00:00:02, arriving after
-- a fired 00:00:04) that bounded OVER drops because its partition already fired past it.
SELECT sensor, ts, v, d,
  COUNT(*) OVER w AS cnt_all,
  COUNT(v) OVER w AS cnt_v,
  SUM(v) OVER w AS sum_v,
  AVG(v) OVER w AS avg_v,
  MIN(v) OVER w AS min_v,
  MAX(v) OVER w AS max_v,
  SUM(d) OVER w AS sum_d,
  AVG(d) OVER w AS avg_d,
  MIN(d) OVER w AS min_d,
  MAX(d) OVER w AS max_d
FROM readings
WINDOW w AS (PARTITION BY sensor ORDER BY ts ROWS BETWEEN 3 PRECEDING AND CURRENT ROW)
