-- Correlated EXISTS with an extra inner filter: a customer is kept once if some order of theirs
-- has amount > 10 (1 only via its last order, 3 twice via two orders -> once per outer row);
-- 4's only order has a NULL amount, and the NULL-cust order matches no one.
SELECT c.id, c.cname, c.tier
FROM customers c
WHERE EXISTS (SELECT 1 FROM orders o WHERE o.cust = c.id AND o.amount > 10)
