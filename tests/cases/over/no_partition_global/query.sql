-- No PARTITION BY: one global window. DECIMAL SUM/AVG keep Flink's DECIMAL(38, s) /
-- DECIMAL(38, max(s, 6)) types; SUM of a TINYINT wraps around at 8 bits, as in Flink.
SELECT order_id, shop, ts,
  SUM(amount) OVER w AS total,
  AVG(amount) OVER w AS avg_amount,
  SUM(qty) OVER w AS qty_sum,
  AVG(qty) OVER w AS qty_avg,
  MIN(shop) OVER w AS first_shop_name
FROM orders
WINDOW w AS (ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
