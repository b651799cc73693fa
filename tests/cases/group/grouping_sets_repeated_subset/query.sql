-- Sets listed more than once: Calcite makes a level of sets per copy number (GROUP_ID). A level
-- of two sets ((m) and () at GROUP_ID 1) is grouped as any; where a level has one set ((m) at
-- GROUP_ID 2) that is not every grouping expression, Flink groups it by every grouping
-- expression (m and b, b not NULL) while GROUPING_ID says b is rolled up (found by the SQL
-- fuzzer).
SELECT m, b, COUNT(*) AS c0, GROUPING_ID(m, b) AS gid, GROUP_ID() AS gno
FROM t
GROUP BY GROUPING SETS ((m, b), (m), (), (m), (m), ())
