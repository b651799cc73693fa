-- Every basic aggregate over INT and DOUBLE columns with NULLs; group b has x all NULL
-- (COUNT(x) = 0, SUM/AVG/MIN/MAX NULL) and a d that is NULL except once.
SELECT k,
  COUNT(*) AS cnt, COUNT(x) AS cnt_x, COUNT(DISTINCT x) AS dcnt_x,
  SUM(x) AS sum_x, AVG(x) AS avg_x, MIN(x) AS min_x, MAX(x) AS max_x,
  COUNT(d) AS cnt_d, SUM(d) AS sum_d, AVG(d) AS avg_d, MIN(d) AS min_d, MAX(d) AS max_d
FROM metrics
GROUP BY k
