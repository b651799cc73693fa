-- WHERE under a group window (issue 44: the filter was dropped under every GROUP BY that is
-- not over a window TVF): rows with v <= 3 or no url are not counted.
SELECT user_id, TUMBLE_START(ts, INTERVAL '10' SECOND) AS ws, TUMBLE_END(ts, INTERVAL '10' SECOND) AS we,
  COUNT(*) AS c, SUM(v) AS s
FROM clicks
WHERE v > 3 AND url IS NOT NULL
GROUP BY user_id, TUMBLE(ts, INTERVAL '10' SECOND)
