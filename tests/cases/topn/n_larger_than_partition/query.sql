-- N larger than any partition: every row ranks; DESC puts NULL last.
SELECT category, shop_id, sales, rownum
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY sales DESC, shop_id) AS rownum
  FROM shop_sales)
WHERE rownum <= 100
