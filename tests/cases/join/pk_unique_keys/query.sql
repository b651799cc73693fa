-- LEFT JOIN where the right key is the right table's PRIMARY KEY (one row per key) and the left
-- table (PK oid) is joined on its non-key column cust_id (several orders per customer).
SELECT o.oid, o.cust_id, o.amount, c.id AS customer_id, c.cname, c.segment
FROM orders o
LEFT JOIN customers c ON o.cust_id = c.id
