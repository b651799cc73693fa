-- Grouping sets listed in another order: Flink emits each row's sets in Calcite's order
-- ((a, b), (b), (a), (): b is numbered first, by its first appearance in GROUP BY).
SELECT a, b, COUNT(*) AS c, GROUPING_ID(b, a) AS g
FROM t
GROUP BY GROUPING SETS ((), (b), (a, b), (a))
