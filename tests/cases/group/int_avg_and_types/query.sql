-- SUM/AVG result types and rounding: AVG over INT/BIGINT is integral (truncated toward zero,
-- b: -7/2 = -3), SUM(BIGINT) beyond INT range, SUM/AVG over DECIMAL(10,2) keep decimal scale.
SELECT k,
  SUM(i) AS sum_i, AVG(i) AS avg_i,
  SUM(b) AS sum_b, AVG(b) AS avg_b,
  SUM(m) AS sum_m, AVG(m) AS avg_m, MIN(m) AS min_m, MAX(m) AS max_m
FROM amounts
GROUP BY k
