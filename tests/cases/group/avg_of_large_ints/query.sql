-- AVG of integers adds in BIGINT (no overflow), SUM in the argument's type (it wraps around), as
-- Flink's aggregate functions do (found by the SQL fuzzer: AVG wrapped like SUM).
SELECT k, AVG(a) AS avg_a, SUM(a) AS sum_a, COUNT(*) AS n
FROM t
GROUP BY k
