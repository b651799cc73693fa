-- Aggregate over a retracting LEFT JOIN: when an order arrives the null-padded customer row is
-- retracted; customers without orders count 1 with no amount; a NULL region is its own group.
SELECT c.region, COUNT(*) AS n, COUNT(o.oid) AS n_orders, SUM(o.amount) AS amount
FROM customers c
LEFT JOIN orders o ON c.cust_id = o.cust_id
GROUP BY c.region
