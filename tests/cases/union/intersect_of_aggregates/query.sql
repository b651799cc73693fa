-- INTERSECT of two updating inputs: a count that changes retracts its old row from the SEMI
-- join and the DISTINCT; EXCEPT of the same, in a UNION ALL.
SELECT 'both' AS tag, k, n FROM (
  SELECT k, COUNT(*) AS n FROM a GROUP BY k
  INTERSECT
  SELECT k, COUNT(*) AS n FROM b GROUP BY k)
UNION ALL
SELECT 'a only', k, n FROM (
  SELECT k, COUNT(*) AS n FROM a GROUP BY k
  EXCEPT
  SELECT k, COUNT(*) AS n FROM b GROUP BY k)
