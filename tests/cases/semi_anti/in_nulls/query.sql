-- IN with NULLs on both sides: an outer NULL id never matches (not even the subquery's NULLs),
-- and the subquery's NULL cust does not stop ids 1 and 3 from matching.
SELECT c.id, c.cname
FROM customers c
WHERE c.id IN (SELECT o.cust FROM orders o)
