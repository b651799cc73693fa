-- Over an OVER window Flink expands STDDEV_* / VAR_* to SUM(x * x), SUM(x) and COUNT(x) with
-- every step cast to the argument's type (Calcite's AvgVarianceConvertlet), so INT, BIGINT and
-- TINYINT products and sums wrap, divisions truncate, the square root of a negative wrapped
-- variance is NaN and casts to 0; DOUBLE is the textbook formula (not Welford's).
SELECT k, ts, VAR_POP(x) OVER w AS vp_x, STDDEV_SAMP(x) OVER w AS ss_x,
  VAR_SAMP(b) OVER w AS vs_b, STDDEV_POP(b) OVER w AS sp_b, VAR_POP(y) OVER w AS vp_y,
  VAR_SAMP(d) OVER w AS vs_d, STDDEV(d) OVER w AS sd_d, VARIANCE(x) OVER w + 1 AS v1
FROM e
WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)
