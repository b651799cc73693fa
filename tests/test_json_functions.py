"""The JSON functions (operators_lib/sql/functions/json_*.py): the corpus cases functions/json_*
give Flink's results (test_function_cases); here, where Flink's job fails on a value (measured
with the oracle, Flink 2.3) twinflow's run fails too (exit 2), a text twinflow does not read as
Flink does fails the run naming it, and what is refused before any run."""

from __future__ import annotations

from pathlib import Path

import pytest

from operators_lib.errors import DataError, SqlError
from operators_lib.sql import load_script
from operators_lib.sql.planner import compile_query
from tests.caselib import Case

DDL = "CREATE TABLE t (id INT, s STRING, n INT);\n"


def _run(spark, tmp_path: Path, query: str, rows: list[str], mode: str = "batch"):
    (tmp_path / "ddl.sql").write_text(DDL)
    (tmp_path / "query.sql").write_text(query + "\n")
    quoted = ['"' + r.replace('"', '""') + '"' for r in rows]
    (tmp_path / "t.csv").write_text("id,s,n\n" + "".join(f"{i},{r},1\n"
                                                         for i, r in enumerate(quoted)))
    return Case(tmp_path).run(spark, tmp_path / "out", mode=mode)


@pytest.mark.parametrize(("query", "said"), [
    ("SELECT JSON_VALUE(s, '$.a' RETURNING INT) AS x FROM t", "RETURNING INT"),
    ("SELECT JSON_VALUE(s, '$.a' RETURNING BOOLEAN) AS x FROM t", "RETURNING BOOLEAN"),
    ("SELECT JSON_VALUE(s, 'lax $.z' RETURNING DOUBLE DEFAULT 2.5 ON EMPTY) AS x FROM t",
     "DEFAULT ON EMPTY"),
    ("SELECT JSON_VALUE(s, '$.z' ERROR ON ERROR) AS x FROM t", "ERROR ON ERROR"),
    ("SELECT JSON_VALUE(s, 'lax $.z' ERROR ON EMPTY) AS x FROM t", "ERROR ON EMPTY"),
    ("SELECT JSON_QUERY(s, '$.a' ERROR ON ERROR) AS x FROM t", "ERROR ON ERROR"),
    ("SELECT JSON_QUERY(s, 'lax $.a' ERROR ON EMPTY) AS x FROM t", "ERROR ON EMPTY"),
    ("SELECT JSON_EXISTS(s, '$.z' ERROR ON ERROR) AS x FROM t", "ERROR ON ERROR"),
])
def test_where_flinks_job_fails_on_a_value_the_run_fails(spark, tmp_path, query, said):
    # Each fails Flink 2.3's job on {"a":1.5} (a ClassCastException, or the clause's error).
    with pytest.raises(DataError) as e:  # exit 2
        _run(spark, tmp_path, query, ['{"a":1.5}'])
    assert said in str(e.value), str(e.value)


@pytest.mark.parametrize("text", ['{"a":"\\ud800"}', '{"a":"\ue000"}', '{"a":1e2147483648}'])
def test_a_text_not_read_as_flink_reads_it_fails_the_run_naming_it(spark, tmp_path, text):
    # Flink reads the first as valid JSON (a lone surrogate), rejects the last (BigDecimal's
    # scale); Spark's parser does the opposite, and twinflow marks numbers with U+E000.
    with pytest.raises(DataError) as e:  # exit 2
        _run(spark, tmp_path, "SELECT JSON_VALUE(s, 'lax $.a') AS x FROM t", [text])
    assert "JSON_VALUE of a JSON text twinflow does not read as Flink does" in str(e.value)


@pytest.mark.parametrize(("query", "said"), [
    ("SELECT JSON_VALUE(s, '$.*') FROM t", "the path '$.*' is not supported"),
    ("SELECT JSON_QUERY(s, '$..a') FROM t", "the path '$..a' is not supported"),
    ("SELECT JSON_VALUE(s, '$[-1]') FROM t", "the path '$[-1]' is not supported"),
    ("SELECT JSON_EXISTS(s, 'a.b') FROM t", "the path 'a.b' is not supported"),
    ("SELECT JSON_VALUE(s, s) FROM t", "JSON_VALUE needs a string literal"),
    ("SELECT JSON_VALUE(n, '$') FROM t", "JSON_VALUE needs a string"),
    ("SELECT JSON_VALUE(s, '$' RETURNING BIGINT) FROM t", "RETURNING BIGINT is not supported"),
    ("SELECT JSON_VALUE(s, '$' DEFAULT s ON EMPTY) FROM t", "DEFAULT .. ON EMPTY with anything"),
    ("SELECT JSON_VALUE(s, '$' RETURNING INT DEFAULT 'x' ON ERROR) FROM t",
     "a literal of the result's type (INT)"),
    ("SELECT JSON_QUERY(s, '$' RETURNING ARRAY<STRING>) FROM t", "RETURNING ARRAY<STRING>"),
    ("SELECT s IS JSON OBJECT WITH UNIQUE KEYS FROM t", "not supported"),
    ("SELECT JSON_OBJECT(s VALUE n) FROM t", "JSON_OBJECT needs a string literal as its key"),
    ("SELECT JSON_ARRAY(NULL) FROM t", "untyped NULL"),
    ("SELECT JSON_STRING(DATE '2024-01-01') FROM t", "JSON_STRING of a DATE is not supported"),
    ("SELECT JSON_STRING(ROW(n, s)) FROM t", "JSON_STRING of a ROW"),
    ("SELECT JSON_OBJECT('t' VALUE TIMESTAMP '2024-01-01 00:00:00.000') FROM t",
     "computed timestamp"),
    ("SELECT JSON_ARRAY(j) FROM v", "the column j, a JSON_OBJECT or JSON_ARRAY of a view"),
    ("SELECT JSON_STRING(j2) FROM (SELECT j AS j2 FROM v WHERE id > 1)", "the column j2"),
])
def test_forms_not_reproduced_are_refused(spark, tmp_path, query, said):
    # Flink inserts a view's JSON_OBJECT column as JSON here (measured: its planner merges the
    # projections), as a string after an aggregation (case functions/json_write_aggregated).
    (tmp_path / "ddl.sql").write_text(
        DDL + "CREATE VIEW v AS SELECT id, JSON_OBJECT('a' VALUE n) AS j FROM t;\n")
    (tmp_path / "q.sql").write_text(query)
    with pytest.raises(SqlError) as e:
        compile_query(load_script([tmp_path / "ddl.sql", tmp_path / "q.sql"]), spark)
    assert e.value.exit_code == 2 and said in str(e.value), str(e.value)
