-- LEFT JOIN whose right side is a GROUP BY view, so the right input retracts and updates
-- (c1 has 4 orders); c4 has no order (padded), c5's total has no customer (dropped).
CREATE VIEW totals AS
SELECT cust, SUM(amount) AS total, COUNT(*) AS n
FROM orders
GROUP BY cust;
SELECT c.cust, c.cname, c.tier, t.total, t.n
FROM customers c
LEFT JOIN totals t ON c.cust = t.cust
