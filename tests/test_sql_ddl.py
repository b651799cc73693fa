"""Parsing the Flink dialect: CREATE TABLE details, SET, views, statement splitting, lines."""

from __future__ import annotations

import pytest

from operators_lib.errors import InputError, SqlError
from operators_lib.sql import load_script
from operators_lib.types import FlinkType


def _load(tmp_path, text):
    p = tmp_path / "s.sql"
    p.write_text(text)
    return load_script([p])


def test_create_table_with_every_supported_clause(tmp_path):
    s = _load(tmp_path, """-- a comment; with a semicolon
CREATE TEMPORARY TABLE IF NOT EXISTS `Orders` (
  id BIGINT NOT NULL COMMENT 'the id',
  price DECIMAL(10, 2),
  name VARCHAR(20),
  ts TIMESTAMP(3),
  pt AS PROCTIME(),
  doubled AS price * 2,
  WATERMARK FOR ts AS ts - INTERVAL '0.5' SECOND,
  PRIMARY KEY (id) NOT ENFORCED
) WITH ('connector' = 'kafka', 'format' = 'json; not a statement end');
SET 'table.exec.state.ttl' = '1 h';
CREATE VIEW v AS SELECT id FROM Orders;
SELECT * FROM v
""")
    t = s.catalog.tables["orders"]
    assert [c.name for c in t.columns] == ["id", "price", "name", "ts", "pt", "doubled"]
    assert t.column("PRICE").type == FlinkType("DECIMAL", 10, 2)
    assert t.column("pt").proctime and t.column("doubled").expr is not None
    assert [c.name for c in t.physical] == ["id", "price", "name", "ts"]
    assert (t.watermark.column, t.watermark.delay_ms) == ("ts", 500)
    assert t.primary_key == ("id",)
    assert s.catalog.settings == {"table.exec.state.ttl": "1 h"}
    assert "v" in s.catalog.views
    assert s.query_stmt.line == 14


@pytest.mark.parametrize("ddl, needle, line", [
    ("CREATE TABLE t (\n a INT,\n b GEOMETRY\n)", "unsupported column type 'GEOMETRY'", 3),
    ("CREATE TABLE t (\n a INT,\n ts TIMESTAMP(3),\n WATERMARK FOR nope AS nope\n)",
     "no such column", 4),
    ("CREATE TABLE t (\n a INT,\n WATERMARK FOR a AS a\n)", "must be a TIMESTAMP", 3),
    ("CREATE TABLE t (a INT, a BIGINT)", "duplicate column", 1),
    ("CREATE TABLE t (\n a INT\n) PARTITIONED BY (a)", "key=value folders under the 'path'",
     1),
    ("CREATE TABLE t (\n a INT\n) PARTITIONED BY (b)", "PARTITIONED BY column b", 1),
    ("CREATE TABLE t (\n a INT\n) LIKE u", "unsupported clause", 3),
    ("CREATE TABLE t (a INT, m STRING METADATA FROM 'k')", "METADATA columns", 1),
])
def test_ddl_errors_name_the_line(tmp_path, ddl, needle, line):
    with pytest.raises(SqlError) as e:
        _load(tmp_path, ddl + ";\nSELECT 1 FROM t")
    assert needle in str(e.value) and f"line {line}" in str(e.value)


def test_no_query_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no SELECT"):
        _load(tmp_path, "CREATE TABLE t (a INT)")
