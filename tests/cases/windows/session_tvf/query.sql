SELECT window_start, window_end, window_time, user_id, COUNT(*) AS c, SUM(v) AS s, MIN(url) AS mu
FROM TABLE(SESSION(TABLE clicks PARTITION BY user_id, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY window_start, window_end, window_time, user_id
