SELECT c.user_id, c.url, b.user_id AS buyer, b.amount,
  COALESCE(c.window_start, b.window_start) AS window_start,
  COALESCE(c.window_end, b.window_end) AS window_end
FROM (SELECT * FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND))) c
FULL JOIN (SELECT * FROM TABLE(TUMBLE(TABLE buys, DESCRIPTOR(ts), INTERVAL '10' SECOND))) b
ON c.user_id = b.user_id AND c.window_start = b.window_start AND c.window_end = b.window_end
