-- A TIMESTAMP_LTZ(3) rowtime: window bounds are TIMESTAMP(3), window_time a TIMESTAMP_LTZ(3),
-- the same digits in the session time zone (UTC).
SELECT k, window_start, window_end, window_time, COUNT(*) AS c
FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND))
GROUP BY k, window_start, window_end, window_time
