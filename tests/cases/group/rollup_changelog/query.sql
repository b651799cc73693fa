-- ROLLUP (a, b): the sets (a, b), (a), (); each input row updates one group per set, in that
-- order. A NULL key of the data (a or b empty) is a group of its own beside the rolled-up
-- NULL: GROUPING / GROUPING_ID tell them apart.
SELECT a, b, SUM(v) AS s, COUNT(*) AS c, GROUPING(a) AS ga, GROUPING(b) AS gb,
  GROUPING_ID(a, b) AS gid
FROM t
GROUP BY ROLLUP (a, b)
