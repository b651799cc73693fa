-- NOT IN with two columns: an order is kept when every subquery row differs from it for sure
-- in some column; a NULL in a column it does not differ in makes the comparison unknown.
SELECT o.oid, o.cust, o.region
FROM orders o
WHERE (o.cust, o.region) NOT IN (SELECT v.cust, v.region FROM vip v WHERE v.tier <> 3)
