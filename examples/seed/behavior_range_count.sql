-- Seed 004, RANGE OVER with a named window: each user's behaviors within the last 2 seconds;
-- rows with the same time are peers and share one window.
SELECT
  user_id,
  COUNT(*) OVER w AS behavior_count,
  ts
FROM user_behavior
WINDOW w AS (
  PARTITION BY user_id
  ORDER BY ts
  RANGE BETWEEN INTERVAL '2' SECOND PRECEDING AND CURRENT ROW
)
