-- DENSE_RANK: ranks without gaps.
SELECT *
FROM (
  SELECT shop_id, category, sales, DENSE_RANK() OVER (PARTITION BY category ORDER BY sales DESC) AS rk
  FROM shop_sales)
WHERE rk <= 2
