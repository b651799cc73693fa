-- Top 1 per category without the number (Flink emits -U/+U for a top-1).
SELECT category, shop_id, sales
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY sales DESC) AS rownum
  FROM shop_sales)
WHERE rownum = 1
