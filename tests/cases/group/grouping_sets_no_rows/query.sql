-- No row passes WHERE: with grouping sets the empty set is a keyed group (Flink's Expand +
-- Aggregate), so neither mode answers a row for it, unlike an aggregate without GROUP BY.
SELECT a, COUNT(*) AS c, SUM(v) AS s
FROM t
WHERE v > 100
GROUP BY GROUPING SETS ((a), ())
