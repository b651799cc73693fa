-- Deduplication keeping each user's first click by event time (Flink's Deduplicate): a row is
-- emitted once the watermark passes it (+I only); an earlier row arriving before that replaces
-- it; a row at or behind the watermark is late and dropped.
SELECT user_id, url, ts
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts ASC) AS rn
  FROM clicks)
WHERE rn = 1
