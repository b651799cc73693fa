SELECT
  TUMBLE_END(rowtime, INTERVAL '20' MINUTE),
	user_id,
	SUM(cnt)
FROM (
    SELECT
    	user_id,
    	COUNT(behavior) AS cnt,
    	TUMBLE_ROWTIME(ts, INTERVAL '10' SECOND) AS rowtime
    FROM user_behavior
    GROUP BY user_id, TUMBLE(ts, INTERVAL '10' SECOND)
  )
GROUP BY TUMBLE(rowtime, INTERVAL '20' MINUTE), user_id
