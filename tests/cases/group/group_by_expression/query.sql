-- GROUP BY an expression (UPPER(region)) and a second key: case variants fold into one group;
-- NULL region and NULL channel each form their own group (NULL keys group together).
SELECT UPPER(s.region) AS region_u, s.channel, COUNT(*) AS n, SUM(s.amount) AS total
FROM sales s
GROUP BY UPPER(s.region), s.channel
