-- ±Infinity through GROUP BY: MIN, MAX and COUNT treat it as Flink does (SUM and AVG over
-- ±Infinity are refused: Flink's streaming sum turns into NaN once an Infinity is retracted).
SELECT k, MIN(d) AS lo, MAX(d) AS hi, COUNT(d) AS n, MIN(f) AS flo, MAX(f) AS fhi
FROM m
GROUP BY k
