-- The empty set listed twice beside (m): the GROUP_ID 1 level has the one set (), which Flink
-- groups by m (m not NULL) while GROUPING(m) is 1.
SELECT m, COUNT(*) AS c0, GROUPING(m) AS g, GROUP_ID() AS gno
FROM t
GROUP BY GROUPING SETS ((m), (), ())
