-- Uncorrelated IN: customer 1 has 3 orders and 2 has 2, yet each outer row appears once;
-- duplicate outer rows (two "bob" rows, id 1 twice) are kept; 4, 5 have no order, order 9 no customer.
SELECT c.id, c.cname, c.tier
FROM customers c
WHERE c.id IN (SELECT o.cust FROM orders o)
