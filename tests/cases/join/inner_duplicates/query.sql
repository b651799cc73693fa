-- INNER JOIN on a many-to-many key: 'a' has 4 orders (one exact duplicate row) x 3 payments
-- (one exact duplicate) = 12 rows; 'b', 'f' (orders only) and 'c' (payments only) vanish.
SELECT o.oid, o.cust, o.amount, p.pid, p.paid
FROM orders o
JOIN payments p ON o.cust = p.cust
