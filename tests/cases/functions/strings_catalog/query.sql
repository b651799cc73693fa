-- Flink's string functions beside Spark's (issue 44): INITCAP changes ASCII letters only, ASCII is
-- the first UTF-8 byte as a signed byte, LPAD/RPAD of a negative length are NULL, OVERLAY past the
-- end leaves the string, OVERLAY .. FOR 0 (or less) keeps the string up to FROM and what it places
-- (found by the SQL fuzzer; Spark inserts instead).
SELECT id, LPAD(s, n, '*') AS lp, RPAD(s, n, 'xy') AS rp, REPLACE(s, p, '#') AS rep,
  POSITION(p IN s) AS pos, LOCATE(p, s) AS loc, LOCATE(p, s, 3) AS loc3, INITCAP(s) AS ic,
  REVERSE(s) AS rev, `LEFT`(s, n) AS l, `RIGHT`(s, n) AS r, REPEAT(s, n) AS rp2,
  LTRIM(s) AS lt, RTRIM(s) AS rt, ASCII(s) AS asc1, CHR(n + 64) AS ch, TO_BASE64(s) AS b64,
  FROM_BASE64(TO_BASE64(s)) AS unb64, MD5(s) AS md, SHA1(s) AS sh1, SHA256(s) AS sh2,
  REGEXP(s, '[a-z]+') AS rx, s IS DISTINCT FROM p AS dist, s IS NOT DISTINCT FROM p AS ndist,
  OVERLAY(s PLACING p FROM 2 FOR 3) AS ov, OVERLAY(s PLACING 'ZZ' FROM 3) AS ov2,
  OVERLAY(s PLACING p FROM 2 FOR 0) AS ov0, OVERLAY(s PLACING p FROM 1 FOR -1) AS ovn
FROM t
