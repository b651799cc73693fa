-- NOT IN over a subquery that contains a NULL (last row): the predicate is never true, so the
-- final result is empty; rows emitted before the NULL arrives are retracted.
SELECT c.id, c.cname
FROM customers c
WHERE c.id NOT IN (SELECT b.cust FROM blocked b)
