-- An aggregate without GROUP BY that no row reaches: Flink's batch mode answers one row
-- (COUNT 0, SUM NULL), its streaming mode none; twinflow gives each mode Flink's answer and
-- parity says why they differ (explained_by_empty_input) instead of failing.
SELECT COUNT(*) AS n, SUM(amount) AS total
FROM payments
WHERE amount > 1000
