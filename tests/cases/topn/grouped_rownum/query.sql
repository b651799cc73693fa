-- Top 3 shops per category by sales, rank number projected: -U/+U per changed rank.
SELECT *
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY sales DESC) AS rownum
  FROM shop_sales)
WHERE rownum <= 3
