-- Every aggregate over RANGE UNBOUNDED PRECEDING: peers (a @ 00:00:10 twice) share one result;
-- unbounded OVER drops rows at or behind the watermark (Flink's rule for unbounded frames).
SELECT sensor, ts, v, d,
  COUNT(*) OVER w AS cnt_all,
  COUNT(d) OVER w AS cnt_d,
  SUM(v) OVER w AS sum_v,
  AVG(v) OVER w AS avg_v,
  MIN(d) OVER w AS min_d,
  MAX(v) OVER w AS max_v,
  SUM(d) OVER w AS sum_d,
  AVG(d) OVER w AS avg_d
FROM readings
WINDOW w AS (PARTITION BY sensor ORDER BY ts RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
