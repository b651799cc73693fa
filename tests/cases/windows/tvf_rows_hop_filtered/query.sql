SELECT user_id, v, window_start, window_end, window_time
FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
WHERE v > 2 AND window_start >= TIMESTAMP '2024-01-01 00:00:05.000'
