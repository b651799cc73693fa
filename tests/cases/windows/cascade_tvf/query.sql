CREATE TEMPORARY VIEW per_window AS
SELECT user_id, window_start AS ws, window_end AS we, window_time AS wt, COUNT(*) AS c, SUM(v) AS s
FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
GROUP BY user_id, window_start, window_end, window_time;
SELECT window_start, window_end, window_time, COUNT(*) AS windows, SUM(c) AS c, MAX(s) AS max_s, COUNT(DISTINCT user_id) AS users
FROM TABLE(TUMBLE(TABLE per_window, DESCRIPTOR(wt), INTERVAL '20' SECOND))
GROUP BY window_start, window_end, window_time
