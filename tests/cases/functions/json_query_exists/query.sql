-- Flink 2.3's JSON_QUERY (JSON written by Jackson: compact, keys sorted, numbers as Java's
-- BigDecimal prints them, strings re-escaped), its wrappers and ON EMPTY / ON ERROR; JSON_EXISTS
-- (a JSON null is not found; strict errors are FALSE unless ON ERROR says otherwise); and
-- IS [NOT] JSON [VALUE | SCALAR | ARRAY | OBJECT] (FALSE for NULL).
SELECT id,
  JSON_QUERY(s, '$') AS r, JSON_QUERY(s, '$.a') AS a, JSON_QUERY(s, '$.b') AS b,
  JSON_QUERY(s, 'lax $.c') AS c, JSON_QUERY(s, '$.a.b.c') AS abc, JSON_QUERY(s, '$[2]') AS i2,
  JSON_QUERY(s, '$.b' WITH WRAPPER) AS bw, JSON_QUERY(s, '$.a' WITH CONDITIONAL ARRAY WRAPPER) AS ac,
  JSON_QUERY(s, 'lax $.a' WITH UNCONDITIONAL WRAPPER) AS au,
  JSON_QUERY(s, 'lax $.z' WITHOUT ARRAY WRAPPER) AS z,
  JSON_QUERY(s, 'lax $.a' EMPTY ARRAY ON EMPTY) AS ae, JSON_QUERY(s, 'strict $.a' EMPTY OBJECT ON ERROR) AS ao,
  JSON_QUERY(s, 'strict $.n' EMPTY ARRAY ON EMPTY EMPTY OBJECT ON ERROR) AS sn,
  JSON_QUERY(s, 'lax $.n' EMPTY ARRAY ON EMPTY EMPTY OBJECT ON ERROR) AS lxn,
  JSON_QUERY(s, 'lax $' NULL ON EMPTY EMPTY ARRAY ON ERROR) AS lr,
  JSON_EXISTS(s, '$.a') AS ea, JSON_EXISTS(s, 'lax $.a') AS ela, JSON_EXISTS(s, '$.a' TRUE ON ERROR) AS eat,
  JSON_EXISTS(s, '$.a' UNKNOWN ON ERROR) AS eau, JSON_EXISTS(s, 'lax $.a' TRUE ON ERROR) AS elat,
  JSON_EXISTS(s, '$.n' TRUE ON ERROR) AS ent, JSON_EXISTS(s, 'lax $.n') AS eln,
  JSON_EXISTS(s, 'lax $' UNKNOWN ON ERROR) AS elr, JSON_EXISTS(s, '$[1]') AS e1,
  JSON_EXISTS(s, 'lax $.a.b' FALSE ON ERROR) AS eab,
  s IS JSON AS j, s IS JSON VALUE AS jv, s IS JSON SCALAR AS js, s IS JSON ARRAY AS ja,
  s IS JSON OBJECT AS jo, s IS NOT JSON AS nj, s IS NOT JSON OBJECT AS njo,
  '' IS JSON AS je, ' [] ' IS JSON ARRAY AS jsa,
  URL_ENCODE(JSON_QUERY('["\u2028\u00e9\u0000\/"]', '$')) AS hx
FROM t
