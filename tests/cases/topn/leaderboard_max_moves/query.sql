-- Top 4 players by best score, rank projected: rows move up by several ranks (Flink's
-- update-fast TopN retracts the new rank's row and the moved row first).
SELECT player, best, rn
FROM (
  SELECT player, best, ROW_NUMBER() OVER (ORDER BY best DESC) AS rn
  FROM (SELECT player, MAX(points) AS best FROM plays GROUP BY player))
WHERE rn <= 4
