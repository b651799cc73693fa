SELECT window_start, window_end, user_id, url, v, ts FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, user_id ORDER BY ts DESC) AS rn
  FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND))
) WHERE rn = 1
