SELECT * FROM (
  SELECT user_id, url, v, window_start, window_end,
    ROW_NUMBER() OVER (PARTITION BY window_start, window_end, user_id ORDER BY v DESC) AS rn
  FROM TABLE(SESSION(TABLE clicks PARTITION BY user_id, DESCRIPTOR(ts), INTERVAL '5' SECOND))
) WHERE rn <= 2
