-- Flink 2.3's JSON_VALUE over Jackson-parsed text and Jayway paths: a path without a mode is
-- strict (a missing key, a JSON null, an object or array, an invalid text or the text null is an
-- error) and lax makes all but the text null empty; numbers print as Java's Integer / Long /
-- BigInteger and BigDecimal (1E+5, 0.0, 1.50); text after the first value is ignored; the last
-- of a repeated key wins. Values for each ON EMPTY / ON ERROR show which one answers.
SELECT id,
  JSON_VALUE(s, '$.a') AS a, JSON_VALUE(s, '$.b') AS b, JSON_VALUE(s, 'lax $.c') AS c,
  JSON_VALUE(s, '$.c.d[2].e') AS cde, JSON_VALUE(s, '$.n') AS n, JSON_VALUE(s, '$') AS r,
  JSON_VALUE(s, '$[1]') AS i1, JSON_VALUE(s, 'lax $[2].three') AS i2,
  JSON_VALUE(s, '$.d') AS d, JSON_VALUE(s, '$.e') AS e, JSON_VALUE(s, '$.f') AS f,
  JSON_VALUE(s, '$.g') AS g, JSON_VALUE(s, '$.h') AS h, JSON_VALUE(s, '$.i') AS i,
  JSON_VALUE(s, '$[''a.b'']') AS ab, JSON_VALUE(s, '$.a.b') AS a_b,
  JSON_VALUE(s, '$["a''b"]') AS aq, JSON_VALUE(s, '$.1') AS k1, JSON_VALUE(s, '$['''']') AS emp,
  JSON_VALUE(s, 'strict $.a.b.c.d[1].e[1].f') AS deep, JSON_VALUE(s, '$.b[1].x') AS bx,
  JSON_VALUE(s, '$.a' DEFAULT 'E' ON EMPTY DEFAULT 'R' ON ERROR) AS dflt,
  JSON_VALUE(s, 'lax $.a' DEFAULT 'E' ON EMPTY DEFAULT 'R' ON ERROR) AS lax_a,
  JSON_VALUE(s, 'LAX $.n' DEFAULT 'E' ON EMPTY DEFAULT 'R' ON ERROR) AS lax_n,
  JSON_VALUE(s, '  strict  $.n' DEFAULT 'E' ON EMPTY DEFAULT 'R' ON ERROR) AS strict_n,
  JSON_VALUE(s, 'lax $' DEFAULT 'E' ON EMPTY DEFAULT 'R' ON ERROR) AS lax_r,
  JSON_VALUE(s, 'lax $[5]' DEFAULT 'E' ON EMPTY DEFAULT 'R' ON ERROR) AS lax_i5,
  JSON_VALUE(s, 'strict $[5]' DEFAULT 'E' ON EMPTY DEFAULT 'R' ON ERROR) AS strict_i5,
  JSON_VALUE(s, 'lax $.a[0]' NULL ON EMPTY DEFAULT 'R' ON ERROR) AS lax_a0,
  JSON_VALUE(s, '$.a' RETURNING VARCHAR(3) DEFAULT 'R' ON ERROR) AS v3,
  URL_ENCODE(JSON_VALUE(s, 'lax $.z')) AS z, JSON_VALUE('', '$' DEFAULT 'R' ON ERROR) AS blank,
  JSON_VALUE(' 7 ', 'lax $') AS spaced
FROM t
