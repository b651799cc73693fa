-- JSON_ARRAYAGG in a window TVF aggregate: each window's values in arrival order.
SELECT window_start, window_end, JSON_ARRAYAGG(s) AS a, JSON_ARRAYAGG(n NULL ON NULL) AS b
FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '3' SECOND))
GROUP BY window_start, window_end
