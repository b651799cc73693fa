-- NOT EXISTS over a GROUP BY view (a retracting subquery input whose sums grow): keep customers whose
-- total does not exceed their cap; ann (30 > 25) and bob (110 > 100) drop out, cid (9) stays, dan has no
-- orders, eve's cap is NULL (the comparison is unknown, so the row is kept).
CREATE VIEW totals AS SELECT o.cust, SUM(o.amount) AS total FROM orders o GROUP BY o.cust;
SELECT c.id, c.cname, c.cap
FROM customers c
WHERE NOT EXISTS (SELECT 1 FROM totals t WHERE t.cust = c.id AND t.total > c.cap)
