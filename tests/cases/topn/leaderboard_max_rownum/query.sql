-- Top 3 players by their best score, rank projected (MAX only grows: Flink's update-fast TopN
-- emits -U/+U per changed rank).
SELECT player, best, rn
FROM (
  SELECT player, best, ROW_NUMBER() OVER (ORDER BY best DESC) AS rn
  FROM (SELECT player, MAX(points) AS best FROM plays GROUP BY player))
WHERE rn <= 3
