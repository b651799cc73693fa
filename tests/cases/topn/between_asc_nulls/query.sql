-- Ranks 2..4 ascending (NULL sorts first ascending), rank projected.
SELECT shop_id, category, sales, rn
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY sales ASC) AS rn
  FROM shop_sales)
WHERE rn BETWEEN 2 AND 4
