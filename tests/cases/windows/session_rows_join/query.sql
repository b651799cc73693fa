SELECT c.user_id, c.url, b.amount, c.window_start, c.window_end
FROM (SELECT * FROM TABLE(SESSION(TABLE clicks PARTITION BY user_id, DESCRIPTOR(ts), INTERVAL '3' SECOND))) c
LEFT JOIN (SELECT * FROM TABLE(SESSION(TABLE buys PARTITION BY user_id, DESCRIPTOR(ts), INTERVAL '3' SECOND))) b
ON c.user_id = b.user_id AND c.window_start = b.window_start AND c.window_end = b.window_end
