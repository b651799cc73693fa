SELECT user_id, url, v, ts, window_start, window_end, window_time
FROM TABLE(SESSION(TABLE clicks PARTITION BY user_id, DESCRIPTOR(ts), INTERVAL '5' SECOND))
WHERE v IS NULL OR v <> 6
