-- IN whose outer side is a LEFT JOIN + GROUP BY view (retracting: totals update as orders arrive,
-- dan/eve stay NULL-padded with 0 orders); only VIP customers 1, 4, 5 are kept, 9 has no customer row.
CREATE VIEW totals AS SELECT c.id, c.cname, SUM(o.amount) AS total, COUNT(o.oid) AS n FROM customers c LEFT JOIN orders o ON o.cust = c.id GROUP BY c.id, c.cname;
SELECT t.id, t.cname, t.total, t.n
FROM totals t
WHERE t.id IN (SELECT v.cust FROM vips v)
