-- Global top 10 by sales (single level): the reference for nested_seed.
SELECT *
FROM (
SELECT shop_id, shop_name, sales,
ROW_NUMBER() OVER (ORDER BY sales DESC) AS rownum
FROM shop_sales)
WHERE rownum <= 10
