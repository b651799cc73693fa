-- RANK: peers share a rank, and more than N rows can make the cut.
SELECT *
FROM (
  SELECT shop_id, category, sales, RANK() OVER (PARTITION BY category ORDER BY sales DESC) AS rk
  FROM shop_sales)
WHERE rk <= 2
