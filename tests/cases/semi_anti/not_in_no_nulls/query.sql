-- NOT IN over a subquery without NULLs: ids 2 and 4 are excluded (both id-2 rows), the rest kept,
-- but the NULL id is dropped (NULL NOT IN a non-empty set is unknown).
SELECT c.id, c.cname
FROM customers c
WHERE c.id NOT IN (SELECT b.cust FROM blocked b)
