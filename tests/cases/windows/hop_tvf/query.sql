SELECT user_id, window_start, window_end, COUNT(*) AS c, SUM(v) AS s
FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) GROUP BY user_id, window_start, window_end
