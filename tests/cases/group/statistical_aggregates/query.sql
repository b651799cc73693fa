-- STDDEV_* / VAR_* as Flink reduces them: Welford's M2 in DOUBLE (in arrival order) over
-- COUNT, cast to the argument's type: an INT result truncates, a too large one saturates
-- (d: VAR_POP(x) is INT's maximum), a TINYINT wraps, a DECIMAL is DECIMAL(38, 6); the sample
-- forms are NULL for one value (b, e), all forms NULL for none (b's first row).
SELECT k,
  STDDEV_POP(x) AS sp_x, STDDEV_SAMP(x) AS ss_x, VAR_POP(x) AS vp_x, VAR_SAMP(x) AS vs_x,
  VARIANCE(x) AS var_x, STDDEV(x) AS sd_x,
  STDDEV_POP(d) AS sp_d, STDDEV_SAMP(d) AS ss_d, VAR_POP(d) AS vp_d, VAR_SAMP(d) AS vs_d,
  VAR_POP(m) AS vp_m, STDDEV_SAMP(m) AS ss_m, VAR_SAMP(b) AS vs_b, STDDEV_POP(b) AS sp_b,
  VAR_POP(y) AS vp_y, VAR_SAMP(y) FILTER (WHERE y > 0) AS vs_y_pos
FROM t
GROUP BY k
