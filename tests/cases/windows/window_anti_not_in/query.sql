SELECT c.user_id, c.url, c.window_start, c.window_end
FROM (SELECT * FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND))) c
WHERE c.user_id NOT IN (
  SELECT b.user_id FROM (SELECT * FROM TABLE(TUMBLE(TABLE buys, DESCRIPTOR(ts), INTERVAL '10' SECOND))) b
  WHERE c.window_start = b.window_start AND c.window_end = b.window_end)
