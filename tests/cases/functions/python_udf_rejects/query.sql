-- A Python UDF in a WHERE conjunct and in a projection under GROUP BY; the rows it fails on
-- are rejected in twinflow's reject mode (tests/test_python_udfs.py adds them to the input).
CREATE TEMPORARY FUNCTION parse_qty AS 'udfs.parse_qty' LANGUAGE PYTHON;
SELECT shop, SUM(parse_qty(qty_text)) AS qty, COUNT(*) AS n
FROM orders
WHERE price > 0 AND parse_qty(qty_text) >= 1
GROUP BY shop
