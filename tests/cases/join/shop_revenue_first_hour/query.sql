-- Orders and revenue per region, customers without orders included (LEFT JOIN + GROUP BY):
-- the join retracts a customer's null-padded row when the first order arrives, and the
-- aggregate updates its region with -U/+U.
SELECT c.region,
       COUNT(DISTINCT c.cust_id) AS customers,
       COUNT(o.order_id) AS orders,
       COALESCE(SUM(o.amount), 0) AS revenue
FROM customers c
LEFT JOIN orders o ON c.cust_id = o.cust_id
GROUP BY c.region
