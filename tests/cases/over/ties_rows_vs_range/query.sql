-- Rows with equal time: ROWS windows order peers by arrival (each gets its own running sum),
-- RANGE windows treat peers as one window. Compared in one query via a view.
CREATE TEMPORARY VIEW per_user AS
SELECT u, ts, amount,
  SUM(amount) OVER (PARTITION BY u ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
    AS rows_sum
FROM clicks;
SELECT u, ts, amount, rows_sum FROM per_user
