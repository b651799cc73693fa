-- Global top 5, multi-key order with mixed directions, rownum < N, and an extra condition.
SELECT shop_id, sales, rating, r
FROM (
  SELECT *, ROW_NUMBER() OVER (ORDER BY sales DESC, rating ASC, shop_name DESC) AS r
  FROM shop_sales)
WHERE r < 6 AND sales > 50
