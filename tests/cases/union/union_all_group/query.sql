-- UNION ALL of two tables (INT and BIGINT: the union's column is BIGINT), aggregated.
SELECT k, COUNT(*) AS n, SUM(v) AS total
FROM (
  SELECT k, v FROM a
  UNION ALL
  SELECT k, w FROM b WHERE note <> 'skip'
)
GROUP BY k
