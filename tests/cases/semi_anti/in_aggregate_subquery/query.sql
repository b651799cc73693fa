-- Uncorrelated IN over a GROUP BY ... HAVING subquery (customers with >= 2 orders): the set
-- grows as counts pass 2 (1, 2, 3); 4 and 5 have one order; the NULL group never matches.
SELECT c.id, c.cname
FROM customers c
WHERE c.id IN (SELECT o.cust FROM orders o GROUP BY o.cust HAVING COUNT(*) >= 2)
