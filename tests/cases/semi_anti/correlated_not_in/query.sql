-- Correlated NOT IN, set = custs of orders in the customer's region: north={1}, south={2,3,1}, east={NULL}
-- (drops every east row), west={9}, up={}. A NULL id is dropped where its set is non-empty (north, west)
-- and kept where it is empty (up); a NULL region gives an empty set, so fay is kept.
SELECT c.id, c.cname, c.region
FROM customers c
WHERE c.id NOT IN (SELECT o.cust FROM orders o WHERE o.region = c.region)
