-- The 2 players with the lowest worst score, per first letter bucket of the name (MIN only
-- falls: ordered ASC, Flink's update-fast TopN; the partition key is a GROUP BY key).
SELECT grp, player, worst
FROM (
  SELECT grp, player, worst, ROW_NUMBER() OVER (PARTITION BY grp ORDER BY worst ASC) AS rn
  FROM (SELECT MOD(CHAR_LENGTH(player), 2) AS grp, player, MIN(points) AS worst
        FROM plays GROUP BY MOD(CHAR_LENGTH(player), 2), player))
WHERE rn <= 2
