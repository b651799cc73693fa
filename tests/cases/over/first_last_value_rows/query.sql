-- FIRST_VALUE and LAST_VALUE over an OVER window skip NULLs (Flink's First/LastValue
-- functions): the first and last non-NULL values of the frame, in time then arrival order.
SELECT k, ts, x, FIRST_VALUE(x) OVER w AS fx, LAST_VALUE(x) OVER w AS lx,
  FIRST_VALUE(s) OVER w AS fs, LAST_VALUE(s) OVER w AS ls, LAST_VALUE(d) OVER w AS ld
FROM e
WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)
