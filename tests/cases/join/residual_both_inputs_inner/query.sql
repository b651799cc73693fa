-- The same residual in an INNER join (Spark's own join in both modes).
SELECT a.k, a.v, b.w, b.code
FROM a JOIN b
ON a.k = b.k AND a.v + b.w > 100 AND (a.v * 2 - b.w <> 10 OR a.name || b.code = 'xy')
