SELECT * FROM (
  SELECT user_id, url, v, ts, window_start, window_end,
    ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY v DESC) AS rn
  FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
) WHERE rn <= 2
