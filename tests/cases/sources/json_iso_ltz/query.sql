SELECT window_start, window_end, user_name, COUNT(*) AS clicks, MAX(seen) AS last_seen
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY window_start, window_end, user_name;
