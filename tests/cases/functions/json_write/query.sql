-- Flink 2.3's JSON_STRING, JSON_OBJECT and JSON_ARRAY (Jackson over value nodes): keys sorted
-- in Java's String order, the last value of a repeated key, NULL ON NULL (JSON_OBJECT's
-- default) / ABSENT ON NULL (JSON_ARRAY's), numbers as BigDecimal prints them (a FLOAT widened
-- to DOUBLE first), NaN and the infinities as strings, timestamps in ISO form, ARRAY and MAP
-- values as JSON, a nested JSON_OBJECT / JSON_ARRAY call as JSON and any other string escaped.
SELECT id,
  JSON_STRING(s) AS js, JSON_STRING(n) AS jn, JSON_STRING(b) AS jb, JSON_STRING(d) AS jd,
  JSON_STRING(f) AS jf, JSON_STRING(m) AS jm, JSON_STRING(bo) AS jbo, JSON_STRING(ts) AS jts,
  JSON_STRING(tl) AS jtl, JSON_STRING(ARRAY[n, 2]) AS ja,
  JSON_STRING(ARRAY[s]) AS jas, JSON_STRING(MAP['k', s, 'a', s]) AS jmap,
  JSON_STRING(JSON_OBJECT('a' VALUE n)) AS jso, JSON_STRING(d / 0) AS jinf,
  JSON_STRING(-d / 0) AS jninf, JSON_STRING(CAST(0.00000001 AS DECIMAL(10, 8))) AS tiny,
  JSON_STRING(CAST(123456789.0 AS FLOAT)) AS fl, JSON_STRING(CAST(1.0E-4 AS DOUBLE)) AS small,
  JSON_STRING(1.0E7) AS big, JSON_STRING('') AS e,
  JSON_OBJECT('z' VALUE n, 'a' VALUE s) AS o1, JSON_OBJECT(KEY 'k' VALUE s ABSENT ON NULL) AS o2,
  JSON_OBJECT('k' VALUE s NULL ON NULL) AS o3, JSON_OBJECT() AS o4,
  JSON_OBJECT('d' VALUE d, 'f' VALUE f, 'm' VALUE m, 'bo' VALUE bo, 'ts' VALUE ts,
    'b' VALUE b) AS o5,
  JSON_OBJECT('o' VALUE JSON_OBJECT('x' VALUE n), 'a' VALUE JSON_ARRAY(1, s)) AS o6,
  JSON_OBJECT('arr' VALUE ARRAY[n, 2], 'map' VALUE MAP['k', s]) AS o7,
  JSON_OBJECT('k' VALUE s, 'k' VALUE n) AS o8,
  JSON_OBJECT('k' VALUE n, 'k' VALUE CAST(NULL AS INT) ABSENT ON NULL) AS o9,
  JSON_OBJECT('a"b\' VALUE 1, 'Z' VALUE 2, 'é' VALUE 3, '😀' VALUE 4, '～' VALUE 5) AS o10,
  JSON_ARRAY(n, s, d) AS a1, JSON_ARRAY(s NULL ON NULL) AS a2, JSON_ARRAY(s ABSENT ON NULL) AS a3,
  JSON_ARRAY() AS a4, JSON_ARRAY(JSON_ARRAY(n), JSON_OBJECT('k' VALUE s)) AS a5,
  JSON_ARRAY(m, f, bo, ts, b, tl) AS a6, JSON_ARRAY(JSON_STRING(n)) AS a7,
  JSON_ARRAY(JSON_QUERY(s, '$')) AS a8, JSON_OBJECT('q' VALUE JSON_VALUE(s, '$.a')) AS a9
FROM t
