-- Without the rank number: +I for a row entering the top 3, -D for one leaving.
SELECT shop_id, category, sales
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY sales DESC) AS rownum
  FROM shop_sales)
WHERE rownum <= 3
