-- Flink's math functions (issue 44): LN/LOG of 0 is -Infinity and below 0 NaN (Spark: NULL), SIGN
-- and TRUNCATE keep the argument's type, GREATEST/LEAST are NULL when an argument is.
SELECT id, SIGN(a) AS sa, SIGN(d) AS sd, SIGN(m) AS sm, EXP(d) AS ex, LN(d) AS ln1, LOG10(d) AS l10,
  LOG2(d) AS l2, LOG(d) AS lg, LOG(2, d) AS lg2, TRUNCATE(d, 1) AS tr, TRUNCATE(m, 2) AS trm, TRUNCATE(a) AS tra,
  TRUNCATE(d) AS trd, GREATEST(a, 2) AS gr, LEAST(d, 0.1) AS le, PI() AS pi, DEGREES(d) AS deg, RADIANS(d) AS rad,
  SIN(d) AS si, COS(d) AS co, TAN(d) AS ta, ASIN(d) AS asn, ACOS(d) AS acs, ATAN(d) AS atn, ATAN2(d, 2.0E0) AS at2,
  COT(d) AS ct, SINH(d) AS sh, COSH(d) AS ch, TANH(d) AS th
FROM t
