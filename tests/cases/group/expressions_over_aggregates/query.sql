-- Expressions over aggregates: SUM(INT) / COUNT(*) is integer division (y: -7/2 = -3),
-- MAX - MIN over DOUBLE, CASE over COUNT(*), COALESCE over a NULL aggregate (w: all NULL).
SELECT s.k, SUM(s.a) / COUNT(*) AS ratio, MAX(s.b) - MIN(s.b) AS spread,
  CASE WHEN COUNT(*) > 2 THEN 'big' ELSE 'small' END AS size_class,
  COALESCE(SUM(s.a), 0) + 1 AS sum_plus_one
FROM samples s
GROUP BY s.k
