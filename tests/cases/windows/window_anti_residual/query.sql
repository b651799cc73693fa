SELECT c.user_id, c.url, c.ts, c.window_start, c.window_end
FROM (SELECT * FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND))) c
WHERE NOT EXISTS (
  SELECT * FROM (SELECT * FROM TABLE(TUMBLE(TABLE buys, DESCRIPTOR(ts), INTERVAL '10' SECOND))) b
  WHERE c.user_id = b.user_id AND c.window_start = b.window_start AND c.window_end = b.window_end
    AND b.ts > c.ts)
