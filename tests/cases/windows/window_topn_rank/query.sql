SELECT * FROM (
  SELECT window_start, window_end, url, user_id, c,
    RANK() OVER (PARTITION BY window_start, window_end, url ORDER BY c DESC) AS r
  FROM (
    SELECT window_start, window_end, url, user_id, COUNT(*) AS c
    FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND, INTERVAL '20' SECOND))
    GROUP BY window_start, window_end, url, user_id
  )
) WHERE r <= 1
