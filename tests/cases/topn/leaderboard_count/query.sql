-- Top 3 players by number of plays (COUNT only grows: Flink runs its update-fast TopN).
SELECT player, plays_count
FROM (
  SELECT player, plays_count, ROW_NUMBER() OVER (ORDER BY plays_count DESC) AS rn
  FROM (SELECT player, COUNT(*) AS plays_count FROM plays GROUP BY player))
WHERE rn <= 3
