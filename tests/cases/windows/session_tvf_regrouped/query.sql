SELECT window_start, window_end, url, COUNT(*) AS c, SUM(v) AS s
FROM TABLE(SESSION(TABLE clicks PARTITION BY user_id, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY window_start, window_end, url
