"""``INSERT INTO t [(cols)] SELECT``: the result takes the target's column names and types
(operators_lib/sql/insert.py); what Flink would cast implicitly is cast, anything else refused.
(Nexmark's queries, tests/test_nexmark.py, compare such results with Flink's.)"""

from __future__ import annotations

import csv
import json

import pytest

from operators_lib.errors import SqlError
from operators_lib.runs.lifecycle import run
from operators_lib.runs.spec import RunSpec
from operators_lib.sql import load_script

DDL = """CREATE TABLE t (a INT, b BIGINT, s STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND);
"""


def _run(spark, tmp_path, sink: str, insert: str):
    (tmp_path / "t.csv").write_text("a,b,s,ts\n1,10,x,2024-01-01 00:00:01\n"
                                    "2,20,y,2024-01-01 00:00:02\n")
    (tmp_path / "q.sql").write_text(DDL + sink + ";\n" + insert)
    out = tmp_path / "out"
    result = run(RunSpec.bounded_run([tmp_path / "q.sql"], {"t": tmp_path / "t.csv"}, "batch", out),
                 spark)
    report = json.loads((out / "report.json").read_text())
    rows = list(csv.reader(open(out / "batch.csv")))
    return result, [(c["name"], c["type"]) for c in report["columns"]], rows


def test_the_result_takes_the_sinks_names_and_widened_types(spark, tmp_path):
    sink = ("CREATE TABLE out_t (x BIGINT, label VARCHAR, amount DECIMAL(12, 2)) "
            f"PARTITIONED BY (label) WITH ('connector' = 'filesystem', 'path' = "
            f"'{tmp_path / 'sink'}', 'format' = 'csv')")
    result, columns, rows = _run(spark, tmp_path, sink, "INSERT INTO out_t SELECT a, s, "
                                 "CAST(b AS DECIMAL(11, 2)) FROM t")
    assert result.exit_code == 0
    assert columns == [("x", "BIGINT"), ("label", "STRING"), ("amount", "DECIMAL(12, 2)")]
    assert sorted(rows[1:]) == [["1", "x", "10.00"], ["2", "y", "20.00"]]


def test_a_column_list_maps_by_name_and_keeps_the_sinks_order(spark, tmp_path):
    sink = "CREATE TABLE out_t (x BIGINT, label STRING) WITH ('connector' = 'blackhole')"
    _, columns, rows = _run(spark, tmp_path, sink, "INSERT INTO out_t (label, x) SELECT s, b "
                            "FROM t")
    assert [c for c, _ in columns] == ["x", "label"]
    assert sorted(rows[1:]) == [["10", "x"], ["20", "y"]]


@pytest.mark.parametrize("insert, needle", [
    ("INSERT INTO out_t SELECT b, s FROM t", "column x is INT, the query gives BIGINT"),
    ("INSERT INTO out_t SELECT a FROM t", "the query gives 1 columns, out_t takes 2"),
    ("INSERT INTO out_t (x) SELECT a FROM t", "column(s) label left out"),
    ("INSERT INTO out_t (x, nope) SELECT a, s FROM t", "no column nope in out_t"),
    ("INSERT INTO out_t (x, x) SELECT a, a FROM t", "column x is listed twice"),
    ("INSERT INTO nope SELECT a, s FROM t", "INSERT INTO nope: no such table"),
    ("INSERT INTO out_t SELECT x, label FROM out_t", "unknown table out_t"),
])
def test_what_flink_would_not_cast_is_refused(spark, tmp_path, insert, needle):
    sink = "CREATE TABLE out_t (x INT, label STRING)"
    with pytest.raises(SqlError) as e:
        _run(spark, tmp_path, sink, insert)
    assert needle in str(e.value)
    assert "line 4" in str(e.value)  # the INSERT


def test_statements_after_the_insert_are_refused(tmp_path):
    (tmp_path / "q.sql").write_text(DDL + "CREATE TABLE o (a INT);\nINSERT INTO o SELECT a "
                                    "FROM t;\nSELECT 1")
    with pytest.raises(SqlError, match="statements after the final query"):
        load_script([tmp_path / "q.sql"])
