-- RANGE peers share a window: all three u=1 rows at 12:00:00 get the same sum and count.
SELECT u, ts, amount,
  SUM(amount) OVER w AS range_sum,
  COUNT(*) OVER w AS range_cnt,
  MAX(amount) OVER w AS range_max
FROM clicks
WINDOW w AS (PARTITION BY u ORDER BY ts RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND CURRENT ROW)
