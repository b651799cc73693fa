-- BIGINTs past 2^53 beside NULLs: a float64 round trip would change their last digits.
SELECT k, v, SUM(v) AS s, MAX(v) AS m FROM t GROUP BY k, v
