-- Flink 2.3's IFNULL, CEILING, E, BIN, HEX, IS_ALPHA / IS_DIGIT / IS_DECIMAL (Java's char tests
-- and number parsers: FALSE for NULL and '', digits of any script, NaN, hex floats, a d suffix),
-- INSTR, BETWEEN SYMMETRIC (an OR of both orders, NULL bounds included), SIMILAR TO (Flink's
-- regex translation: '_' is any char but a line break, '.' stays a regex dot, '$' and '\' are
-- literal), TRANSLATE (code points) and ELT (NULL outside 1..count).
SELECT id, IFNULL(n, -1) AS ifn, IFNULL(s, p) AS ifs, IFNULL(n, b) AS ifb, IFNULL(d, n) AS ifd,
  IFNULL(m, 1.123) AS ifm, CEILING(d) AS ce, CEILING(m) AS cem, E() AS e, BIN(n) AS bn,
  BIN(b) AS bb, HEX(n) AS hn, HEX(b) AS hb, HEX(s) AS hs, HEX('') AS he,
  IS_ALPHA(s) AS ia, IS_DIGIT(s) AS idg, IS_DECIMAL(s) AS idc, IS_ALPHA('') AS iae,
  IS_DECIMAL('') AS ide, IS_DIGIT(p) AS idp, IS_DECIMAL(p) AS idcp,
  INSTR(s, p) AS ins, INSTR(s, '') AS inse,
  n BETWEEN SYMMETRIC 5 AND -5 AS bs, n NOT BETWEEN SYMMETRIC -5 AND NULL AS nbs,
  n BETWEEN SYMMETRIC NULL AND 5 AS bsn, s BETWEEN SYMMETRIC p AND 'm' AS bss,
  n BETWEEN ASYMMETRIC 5 AND -5 AS bas,
  s SIMILAR TO '%[[:DIGIT:]]+' AS sim, s SIMILAR TO '(h|a)_+' AS sim2,
  s NOT SIMILAR TO '%$%' AS nsim, s SIMILAR TO '%\%' AS sim3, s SIMILAR TO '[^a-z]+' AS sim4,
  s SIMILAR TO '%.%' AS sim5,
  TRANSLATE(s, 'lo😀', 'xy') AS tr, TRANSLATE(s, p, '#') AS tr2,
  ELT(MOD(n, 3) + 1, s, p) AS el, ELT(n, 'a', 'b', 'c') AS el2
FROM t
