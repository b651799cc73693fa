-- Views and distinct users per page and minute (TUMBLE window TVF): a minute's rows are
-- emitted once, when the watermark passes its end; a row for a minute already emitted is late.
SELECT window_start, window_end, url, COUNT(*) AS `views`, COUNT(DISTINCT user_id) AS users
FROM TABLE(TUMBLE(TABLE page_views, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end, url
