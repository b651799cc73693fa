-- NOT EXISTS with an equality and a non-equi correlation: keep customers with no order above
-- their credit; 1 (60 > 50) and bob (15 > 10) are dropped, bob-b kept; NULL amount/credit or a
-- NULL id never make the inner predicate true, so 4, 5 and the NULL-id row are kept.
SELECT c.id, c.cname, c.credit
FROM customers c
WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.cust = c.id AND o.amount > c.credit)
