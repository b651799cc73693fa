-- A real-time leaderboard: top 3 players by total points (SUM may fall: Flink's retractable
-- TopN), over the unbounded GROUP BY's retractions.
SELECT *
FROM (
  SELECT player, total, ROW_NUMBER() OVER (ORDER BY total DESC) AS rn
  FROM (SELECT player, SUM(points) AS total FROM plays GROUP BY player))
WHERE rn <= 3
