-- IN with two columns: an order qualifies when one subquery row equals it in both.
SELECT o.oid, o.cust, o.region
FROM orders o
WHERE (o.cust, o.region) IN (SELECT v.cust, v.region FROM vip v WHERE v.tier > 1)
