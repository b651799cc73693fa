SELECT user_id, window_start, COUNT(*) AS c, MAX(v) AS mv
FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
GROUP BY user_id, window_start
