-- Flink 2.3's JSON_ARRAYAGG: each row's value as JSON_ARRAY writes it, in arrival order (in
-- batch mode too), NULLs absent (the default) or null (NULL ON NULL), '[]' for none; a nested
-- JSON_OBJECT / JSON_ARRAY value as JSON, any other string escaped.
SELECT k, JSON_ARRAYAGG(s) AS a1, JSON_ARRAYAGG(s NULL ON NULL) AS a2,
  JSON_ARRAYAGG(n ABSENT ON NULL) AS a3, JSON_ARRAYAGG(d) AS a4, JSON_ARRAYAGG(m) AS a5,
  JSON_ARRAYAGG(ts) AS a6, JSON_ARRAYAGG(JSON_OBJECT('v' VALUE n)) AS a7,
  JSON_ARRAYAGG(JSON_STRING(s)) AS a8, JSON_ARRAYAGG(ARRAY[n]) AS a9,
  JSON_ARRAYAGG(n > 1) AS a10, CHAR_LENGTH(JSON_ARRAYAGG(s)) AS len
FROM t
GROUP BY k
