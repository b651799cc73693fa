SELECT window_start, window_end, COUNT(*) AS c, SUM(v) AS s, COUNT(DISTINCT user_id) AS users
FROM TABLE(SESSION(TABLE clicks, DESCRIPTOR(ts), INTERVAL '4' SECOND))
GROUP BY window_start, window_end
