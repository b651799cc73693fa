SELECT c.user_id, c.window_start, c.window_end, c.pv, b.buys, b.amount
FROM (
  SELECT user_id, window_start, window_end, COUNT(*) AS pv
  FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND))
  GROUP BY user_id, window_start, window_end
) c
FULL JOIN (
  SELECT user_id, window_start, window_end, COUNT(*) AS buys, SUM(amount) AS amount
  FROM TABLE(TUMBLE(TABLE buys, DESCRIPTOR(ts), INTERVAL '10' SECOND))
  GROUP BY user_id, window_start, window_end
) b
ON c.user_id = b.user_id AND c.window_start = b.window_start AND c.window_end = b.window_end
  AND (c.pv >= b.buys OR b.amount IS NULL)
