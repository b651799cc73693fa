-- NOT IN over a subquery with a NULL row (a SELECT without FROM): the predicate is never
-- TRUE, so nothing qualifies; IN over a constant row keeps the row equal to it.
SELECT a1, name FROM a
WHERE a1 NOT IN (SELECT b1 FROM b UNION ALL SELECT CAST(NULL AS INT))
UNION ALL
SELECT a1, name FROM a
WHERE a1 IN (SELECT b1 FROM b UNION ALL SELECT 7)
UNION ALL
SELECT 99, 'constant'
