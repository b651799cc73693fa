SELECT
	user_id,
	COUNT(behavior) AS behavior_cnt,
	TUMBLE_END(proctime, INTERVAL '1' MINUTE) AS end_ts
FROM user_behavior
GROUP BY user_id, TUMBLE(proctime, INTERVAL '1' MINUTE)
