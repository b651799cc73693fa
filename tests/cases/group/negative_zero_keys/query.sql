-- -0.0 and 0.0 are two GROUP BY keys in Flink (Java compares the bits), one in Spark and pandas;
-- found by the SQL fuzzer (twinflow merged them; its stream even retracted a row it had not emitted).
SELECT k, d, MAX(v) AS m, COUNT(*) AS n FROM t GROUP BY k, d HAVING MAX(v) > 0
