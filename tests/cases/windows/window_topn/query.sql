SELECT window_start, window_end, user_id, c, s, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY s DESC) AS rn
  FROM (
    SELECT window_start, window_end, user_id, COUNT(*) AS c, SUM(v) AS s
    FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND))
    GROUP BY window_start, window_end, user_id
  )
) WHERE rn <= 2
