-- The two largest values per key over both tables.
SELECT k, v, rn FROM (
  SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn
  FROM (SELECT k, v FROM a UNION ALL SELECT k, CAST(w AS INT) FROM b WHERE w < 100)
) WHERE rn <= 2
