-- HAVING on aggregates: a group enters once it has 2 rows and is out while SUM > 100
-- (b: 2nd row gives 110, enters at 90; c enters at 10, leaves at 105; d never; e SUM NULL).
SELECT p.k, COUNT(*) AS n, SUM(p.amount) AS total
FROM payments p
GROUP BY p.k
HAVING COUNT(*) >= 2 AND SUM(p.amount) <= 100
