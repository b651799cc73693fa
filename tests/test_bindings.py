"""A table's input binding (sql/connectors.py, runs/sources.py): what its WITH clause says,
``--data`` and a query config's ``inputs`` over it, and everything twinflow does not implement
refused with exit 2, by name and line -- never ignored. (What each format reads is Flink's:
tests/test_source_cases.py.)"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobs.cli import main
from operators_lib.errors import SqlError
from operators_lib.runs.query_config import QueryConfig
from operators_lib.sql.connectors import binding
from tests.scheduled import stream_increment

COLUMNS = "id INT, name STRING, ts TIMESTAMP(3)"
QUERY = "SELECT id, name, ts FROM t"


def _run(tmp: Path, with_clause: str | None, *data: str, query: str = QUERY) -> list[str]:
    """``twinflow run``'s arguments for table t declared with ``with_clause``."""
    ddl = f"CREATE TABLE t ({COLUMNS})" + (f"\nWITH ({with_clause})" if with_clause else "")
    (tmp / "ddl.sql").write_text(ddl + ";\n")
    (tmp / "q.sql").write_text(query)
    return ["run", "--sql", str(tmp / "ddl.sql"), "--sql", str(tmp / "q.sql"),
            *[a for d in data for a in ("--data", d)], "--out", str(tmp / "out")]


def _refused(capsys, args: list[str], *needles: str) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    for needle in needles:
        assert needle in err, err


def _stream(out: Path) -> list[str]:
    return sorted((out / "stream.csv").read_text().splitlines()[1:])


@pytest.mark.parametrize("with_clause, needles", [
    ("'connector' = 'filesystem', 'path' = 'x', 'format' = 'csv',\n"
     "'csv.escape-character' = '\\'", ["'csv.escape-character' is not supported", "line 1"]),
    ("'connector' = 'filesystem', 'path' = 'x', 'format' = 'json', 'json.map-null-key.mode' "
     "= 'DROP'", ["'json.map-null-key.mode'", "json.ignore-parse-errors"]),
    ("'connector.type' = 'filesystem', 'connector.path' = 'x', 'format.type' = 'csv'",
     ["legacy connector options", "'connector.type'"]),
    ("'connector' = 'kafka', 'topic' = 'x'", ["'connector' = 'kafka' is not supported"]),
    ("'connector' = 'blackhole'", ["is a sink: the table cannot be read"]),
    ("'connector' = 'filesystem', 'path' = 'x', 'format' = 'orc'",
     ["'format' = 'orc' is not supported"]),
    ("'connector' = 'filesystem', 'format' = 'csv'", ["needs 'path' and 'format'"]),
    ("'connector' = 'filesystem', 'path' = 'x', 'format' = 'csv', 'csv.allow-comments' = 'yes'",
     ["'csv.allow-comments' must be 'true' or 'false'"]),
    ("'connector' = 'filesystem', 'path' = 'gs://bucket/t/', 'format' = 'csv'",
     ["'gs://bucket/t/' is a URI twinflow does not read yet"]),
    ("'connector' = 'filesystem' 'path' = 'x'", ["cannot read the WITH clause of t"]),
])
def test_what_twinflow_does_not_implement_is_refused_by_name(spark, tmp_path, capsys,
                                                             with_clause, needles):
    _refused(capsys, _run(tmp_path, with_clause), *needles)


def test_a_table_without_input_is_refused_naming_it(spark, tmp_path, capsys):
    _refused(capsys, _run(tmp_path, None), "no --data given for table(s) the query reads: t",
             "WITH clause")


def test_data_binds_a_table_whole_over_its_with_clause(spark, tmp_path):
    """``--data`` replaces the binding, format included: a header-row CSV over a table bound
    to headerless csv files (which do not exist), and JSON lines by their extension."""
    (tmp_path / "t.csv").write_text("ts,name,id\n2024-01-01 00:00:01,from data,1\n")
    with_clause = "'connector' = 'filesystem', 'path' = 'absent/', 'format' = 'csv'"
    assert main(_run(tmp_path, with_clause, f"t={tmp_path / 't.csv'}")) == 0
    assert _stream(tmp_path / "out") == ["1,from data,2024-01-01 00:00:01.000"]
    (tmp_path / "t.jsonl").write_text('{"id": 2, "name": "json", "ts": "2024-01-01 00:00:02"}\n')
    shutil.rmtree(tmp_path / "out")
    assert main(_run(tmp_path, with_clause, f"t={tmp_path / 't.jsonl'}")) == 0
    assert _stream(tmp_path / "out") == ["2,json,2024-01-01 00:00:02.000"]


def test_a_relative_path_is_read_from_the_sql_files_folder(spark, tmp_path, monkeypatch):
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "t.csv").write_text("1,a,2024-01-01 00:00:01\n")
    monkeypatch.chdir(Path("/"))
    args = _run(tmp_path, "'connector' = 'filesystem', 'path' = 'files/t.csv', "
                          "'format' = 'csv', 'source.monitor-interval' = '1 min'")
    assert main(args) == 0
    assert _stream(tmp_path / "out") == ["1,a,2024-01-01 00:00:01.000"]
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert any("source.monitor-interval is ignored" in w for w in report["warnings"])


def test_a_parquet_column_of_another_type_is_refused_naming_both(spark, tmp_path, capsys):
    (tmp_path / "p").mkdir()
    pq.write_table(pa.table({"id": pa.array([1], pa.int64()), "name": ["a"],
                             "ts": pa.array([0], pa.timestamp("ms"))}),
                   tmp_path / "p" / "0.parquet")
    args = _run(tmp_path, "'connector' = 'filesystem', 'path' = 'p', 'format' = 'parquet'")
    _refused(capsys, args, "column id is int64 in the Parquet file", "table's INT")
    (tmp_path / "p" / "0.parquet").write_text("id,name,ts\n")
    _refused(capsys, args, "not a Parquet file")


def test_an_avro_field_of_a_type_the_column_cannot_take_is_refused_naming_both(
        spark, tmp_path, capsys):
    (tmp_path / "a").mkdir()
    schema = {"type": "record", "name": "r", "fields": [
        {"name": "id", "type": "long"}, {"name": "name", "type": "string"},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}}]}
    with open(tmp_path / "a" / "0.avro", "wb") as fh:
        fastavro.writer(fh, fastavro.parse_schema(schema), [{"id": 1, "name": "a", "ts": 0}])
    args = _run(tmp_path, "'connector' = 'filesystem', 'path' = 'a', 'format' = 'avro'")
    _refused(capsys, args, 'field id is Avro "long"', "table's INT cannot take")


def test_a_refusal_names_the_table_its_file_and_its_line():
    with pytest.raises(SqlError, match=r"table t: .*'csv.escape-character'.*\(ddl.sql, line 3\)"):
        binding("t", (("connector", "filesystem"), ("path", "x"), ("format", "csv"),
                      ("csv.escape-character", "\\")), 3, "ddl.sql")


def test_a_scheduled_run_reads_the_new_files_under_a_with_bound_directory(spark, tmp_path):
    """Every file under the directory, nested ones included, hidden ones not; each once: a
    later run stages only the files that are new, whatever their folder."""
    landing = tmp_path / "landing"
    (landing / "dt=2024-01-01").mkdir(parents=True)
    (landing / "dt=2024-01-01" / "a.json").write_text(
        '{"id": 1, "name": "a", "ts": "2024-01-01 00:00:01"}\n'
        '{"id": 2, "name": "b", "ts": "2024-01-01 00:00:02"}\n')
    (landing / "_tmp.json").write_text('{"id": 9}\n')
    (tmp_path / "ddl.sql").write_text(
        f"CREATE TABLE t ({COLUMNS}) WITH ('connector' = 'filesystem', 'path' = 'landing', "
        "'format' = 'json');\n")
    (tmp_path / "q.sql").write_text("SELECT name, COUNT(*) AS n FROM t GROUP BY name")
    cfg = QueryConfig(name="q", sql=[tmp_path / "ddl.sql", tmp_path / "q.sql"],
                      expectations="q", publish_format="csv", rows_per_batch=10)
    first = stream_increment(cfg, spark, tmp_path / "state", tmp_path / "run1")
    assert first["new_input_rows"] == {"t": 2}
    (landing / "dt=2024-01-02").mkdir()
    (landing / "dt=2024-01-02" / "a.json").write_text(
        '{"id": 3, "name": "a", "ts": "2024-01-02 00:00:01"}\n')
    second = stream_increment(cfg, spark, tmp_path / "state", tmp_path / "run2")
    assert second["new_input_rows"] == {"t": 1}
    assert sorted((tmp_path / "run2" / "stream.csv").read_text().splitlines()[1:]) == [
        "a,2", "b,1"]


def test_partition_folders_that_cannot_be_read_are_refused(spark, tmp_path, capsys):
    """A NULL partition (Flink 2.3 cannot read one), a file outside the key=value folders, a
    value not of its column's type, and --data over a partitioned table: exit 2, naming it."""
    ddl = (f"CREATE TABLE t ({COLUMNS}, hr INT) PARTITIONED BY (hr) WITH ('connector' = "
           "'filesystem', 'path' = 'p', 'format' = 'csv');\n")
    (tmp_path / "ddl.sql").write_text(ddl)
    (tmp_path / "q.sql").write_text("SELECT id, hr FROM t")
    args = ["run", "--sql", str(tmp_path / "ddl.sql"), "--sql", str(tmp_path / "q.sql"),
            "--out", str(tmp_path / "out")]
    for folder, needle in (("hr=__DEFAULT_PARTITION__", "a NULL partition"),
                           (".", "not in a hr=..."),
                           ("hr=ten", "partition hr='ten' is not a valid INT")):
        shutil.rmtree(tmp_path / "p", ignore_errors=True)
        (tmp_path / "p" / folder).mkdir(parents=True)
        (tmp_path / "p" / folder / "0.csv").write_text("1,a,2024-01-01 00:00:01\n")
        _refused(capsys, args, needle)
    (tmp_path / "t.csv").write_text("id,name,ts,hr\n")
    _refused(capsys, [*args, "--data", f"t={tmp_path / 't.csv'}"],
             "is PARTITIONED BY hr: its partition values come from the key=value folders")


def test_skipping_older_folders_lists_from_the_newest_consumed_files_folders_on(tmp_path):
    """``skip_older_folders``: the folders before the newest consumed file's, level by level,
    are not listed (a file landing late in one is not seen: the setting's contract); files
    beside the consumed ones are all listed, so the manifest decides what is new there."""
    from operators_lib.catalog import TableDef
    from operators_lib.io.formats import Format
    from operators_lib.runs.sources import Source

    for name in ("dt=1/hr=1/a.csv", "dt=1/hr=2/b.csv", "dt=2/hr=1/c.csv", "dt=2/hr=2/d.csv",
                 "dt=2/hr=2/e.csv", "dt=2/hr=3/f.csv", "dt=3/hr=0/g.csv", "dt=2/_tmp/h.csv"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("1\n")
    source = Source(TableDef("t", []), tmp_path, Format("csv"), False)
    every = [str(p.relative_to(tmp_path)) for p in source.listing(required=True)]
    assert every == ["dt=1/hr=1/a.csv", "dt=1/hr=2/b.csv", "dt=2/hr=1/c.csv",
                     "dt=2/hr=2/d.csv", "dt=2/hr=2/e.csv", "dt=2/hr=3/f.csv", "dt=3/hr=0/g.csv"]
    later = [str(p.relative_to(tmp_path))
             for p in source.listing(required=True, after="dt=2/hr=2/d.csv")]
    assert later == ["dt=2/hr=2/d.csv", "dt=2/hr=2/e.csv", "dt=2/hr=3/f.csv", "dt=3/hr=0/g.csv"]
