-- Deduplication keeping each user's last click by event time (Flink's Deduplicate): a newer
-- row replaces the kept one (-U/+U), an older or late one does not.
SELECT user_id, url, ts
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts DESC) AS rn
  FROM clicks)
WHERE rn = 1
