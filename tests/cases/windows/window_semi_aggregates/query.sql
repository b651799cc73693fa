SELECT c.user_id, c.window_start, c.window_end, c.clicks
FROM (
  SELECT user_id, window_start, window_end, COUNT(*) AS clicks
  FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
  GROUP BY user_id, window_start, window_end) c
WHERE EXISTS (
  SELECT * FROM (
    SELECT user_id, window_start, window_end, SUM(amount) AS total
    FROM TABLE(HOP(TABLE buys, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
    GROUP BY user_id, window_start, window_end) b
  WHERE b.user_id = c.user_id AND b.window_start = c.window_start AND b.window_end = c.window_end
    AND b.total > 1)
