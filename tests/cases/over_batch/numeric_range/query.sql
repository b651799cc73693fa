-- OVER ordered by a numeric column with a RANGE of 2 below the current round: Flink's batch
-- mode answers it, its streaming mode refuses it (no time attribute), and so does twinflow.
SELECT player, round, points,
  SUM(points) OVER (PARTITION BY player ORDER BY round
                    RANGE BETWEEN 2 PRECEDING AND CURRENT ROW) AS recent
FROM scores
