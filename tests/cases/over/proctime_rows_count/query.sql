-- OVER ordered by processing time: every row is emitted on arrival, in arrival order. ROWS
-- UNBOUNDED makes the result independent of the wall clock, so Flink's output is deterministic.
-- (No parity: processing time differs between runs by definition; the report says so.)
SELECT page, ms,
  COUNT(*) OVER w AS visits_so_far,
  SUM(ms) OVER w AS ms_so_far
FROM visits
WINDOW w AS (PARTITION BY page ORDER BY pt ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
