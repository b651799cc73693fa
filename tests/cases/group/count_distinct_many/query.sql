-- COUNT(DISTINCT) and SUM(DISTINCT) with heavy repetition and NULLs (NULL is not counted);
-- c has only NULLs (distinct count 0, distinct sum NULL); compared with the plain aggregates.
SELECT c.k, COUNT(*) AS n, COUNT(DISTINCT c.x) AS dx, SUM(DISTINCT c.x) AS sdx, SUM(c.x) AS sx,
  COUNT(DISTINCT c.s) AS ds, COUNT(c.s) AS cs
FROM clicks c
GROUP BY c.k
