-- Seed 004, ROWS OVER with a named window: running count of each user's behaviors.
-- Out-of-order rows within the 5 s watermark delay are reordered by time, not late.
SELECT
  user_id,
  behavior,
  COUNT(*) OVER w AS behavior_count,
  ts
FROM user_behavior
WINDOW w AS (
  PARTITION BY user_id
  ORDER BY ts
  ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
)
