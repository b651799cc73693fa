SELECT user_id, window_start, window_end, window_time, COUNT(*) AS c, SUM(v) AS s, MAX(v) AS mx, COUNT(DISTINCT url) AS du
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY user_id, window_start, window_end, window_time
