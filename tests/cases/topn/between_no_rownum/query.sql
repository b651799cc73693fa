-- A rank range not starting at 1 without the number: rows still come as -U/+U pairs.
SELECT shop_id, sales
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY sales ASC) AS rn
  FROM shop_sales)
WHERE rn BETWEEN 2 AND 3
