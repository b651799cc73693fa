-- Three tables: orders INNER JOIN customers (order 5 of unknown customer 9 vanishes), then
-- LEFT JOIN shipments (order 1 shipped twice, orders 2, 4, 6 without shipment padded).
SELECT o.oid, c.cname, c.city, o.amount, s.sid, s.carrier
FROM orders o
JOIN customers c ON o.cust_id = c.cust_id
LEFT JOIN shipments s ON s.oid = o.oid
