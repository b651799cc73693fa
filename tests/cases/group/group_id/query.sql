-- GROUP_ID() numbers the copies of a set listed more than once (0, 1, 2, ..: Calcite's
-- branches of one Expand), and is 0 for a set listed once; usable in expressions and HAVING.
SELECT a, b, COUNT(*) AS c, SUM(v) AS s, GROUP_ID() AS g, GROUP_ID() * 10 + GROUPING(b) AS gb
FROM t
GROUP BY a, GROUPING SETS ((b), (b), (), (b), ())
HAVING GROUP_ID() < 2 OR a IS NULL
