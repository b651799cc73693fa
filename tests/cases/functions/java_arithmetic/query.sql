-- Arithmetic as Java does it, as Flink does (found by the SQL fuzzer and issue 44; each was an
-- exit 3 in Spark's ANSI mode or a different value): integer +, -, * and unary minus wrap
-- around, ABS of the smallest integer is itself, a DOUBLE divided by zero is an infinity or
-- NaN, and TRY_CAST reads '46.5' as the integer 46 ('abc', '1e3': NULL).
SELECT a, a * 100000000 AS wrapped, a + a AS doubled, b * 2 AS big, -a AS neg, -b AS negb,
  ABS(a) AS abs_a, ABS(b) AS abs_b, b * b AS squared,
  d / 0 AS by_zero, CAST(a AS DOUBLE) / d AS by_d,
  TRY_CAST(s AS INT) AS i, TRY_CAST(s AS BIGINT) AS l, TRY_CAST(s AS TINYINT) AS tiny
FROM t
