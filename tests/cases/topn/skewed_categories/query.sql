-- examples/topn/top_shops.sql over both incoming files (skewed: most rows are phones); the
-- hotspot DAG test expects this result
-- The top 3 shops of each category by sales (ties: the first to arrive ranks first).
SELECT category, shop_id, sales, rownum
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY sales DESC) AS rownum
  FROM shop_sales)
WHERE rownum <= 3
