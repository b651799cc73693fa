-- A view's JSON_OBJECT column after an aggregation is a string to Flink 2.3, escaped when it is
-- a value of JSON_ARRAY / JSON_OBJECT / JSON_STRING (its planner nests only a JSON_OBJECT /
-- JSON_ARRAY call, which an aggregation's result is not; such a column straight from the view is
-- refused: tests/test_json_functions.py).
SELECT k, JSON_ARRAY(j) AS a, JSON_OBJECT('j' VALUE j) AS o, JSON_STRING(j) AS s
FROM (SELECT k, MAX(j) AS j FROM v GROUP BY k)
