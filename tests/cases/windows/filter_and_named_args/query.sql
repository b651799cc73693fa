SELECT window_start, user_id, COUNT(*) FILTER (WHERE v > 3) AS big, SUM(v) AS s,
  MIN(url) AS first_url, COUNT(DISTINCT url) AS urls
FROM TABLE(
  HOP(DATA => TABLE clicks, TIMECOL => DESCRIPTOR(ts), SLIDE => INTERVAL '10' SECOND,
      SIZE => INTERVAL '20' SECOND))
WHERE url IS NOT NULL
GROUP BY window_start, window_end, user_id
HAVING COUNT(*) > 0
