SELECT c.user_id, c.url, c.ts AS click_ts, b.amount, b.ts AS buy_ts, c.window_start
FROM (SELECT * FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND))) c
LEFT JOIN (SELECT * FROM TABLE(TUMBLE(TABLE buys, DESCRIPTOR(ts), INTERVAL '10' SECOND))) b
ON c.user_id = b.user_id AND c.window_start = b.window_start AND c.window_end = b.window_end
  AND c.ts < b.ts AND b.amount > 1
