-- JSON_VALUE .. RETURNING INT / DOUBLE / BOOLEAN in Flink 2.3: its generated code casts the
-- value Jackson read (an Integer, a BigDecimal's doubleValue, a Boolean); a value of another
-- kind fails the job (a ClassCastException: tests/test_json_functions.py), so every value here
-- is of the returned kind, missing, null or invalid.
SELECT id, JSON_VALUE(s, '$.i' RETURNING INT) AS i,
  JSON_VALUE(s, 'lax $.i' RETURNING INT DEFAULT -1 ON EMPTY) AS il,
  JSON_VALUE(s, '$.i' RETURNING INT DEFAULT 0 ON ERROR) + 1 AS ip,
  JSON_VALUE(s, 'lax $[0]' RETURNING INTEGER) AS i0,
  JSON_VALUE(s, '$.d' RETURNING DOUBLE) AS d,
  JSON_VALUE(s, '$.b' RETURNING BOOLEAN) AS b,
  JSON_VALUE(s, 'lax $.b' RETURNING BOOLEAN DEFAULT TRUE ON EMPTY DEFAULT FALSE ON ERROR) AS bl
FROM t
