-- A set listed twice gives its rows twice; a plain key beside ROLLUP is in every set;
-- GROUPING of it is 0.
SELECT a, b, COUNT(*) AS c, GROUPING(a) AS ga, GROUPING(b) AS gb
FROM t
GROUP BY a, GROUPING SETS ((b), (b), ())
