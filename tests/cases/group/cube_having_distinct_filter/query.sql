-- CUBE with COUNT(DISTINCT ..), SUM .. FILTER, GROUPING in an expression and in HAVING: a
-- group enters the result when HAVING first holds (+U without -U, as in Flink).
SELECT CASE WHEN GROUPING(a) = 1 THEN 'all' ELSE a END AS a, b,
  COUNT(DISTINCT b) AS nb, SUM(v) FILTER (WHERE v > 2) AS big, GROUPING(a, b) AS g
FROM t
GROUP BY CUBE (a, b)
HAVING COUNT(*) > 1 AND GROUPING(b) = 1
