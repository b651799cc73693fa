"""``INSERT INTO`` a filesystem table (io/sink_files.py): the files twinflow writes hold what
Flink's filesystem sink writes for the same query over the same input (tests/cases/sinks,
expected from real Flink: tests/oracle/sink_expected.py), in both modes; a re-run replaces its
own files; what Flink's streaming mode refuses, and what twinflow does not write, is exit 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from jobs.cli import main
from tests.caselib import CASES, Case
from tests.oracle.sink_expected import avro_files, written

SINKS = sorted(p.parent for p in (CASES / "sinks").glob("*/query.sql"))


def _copy(case: Path, tmp_path: Path) -> Case:
    """The case in a folder of its own: its sink's relative 'path' is written there."""
    work = tmp_path / case.name
    shutil.copytree(case, work, ignore=shutil.ignore_patterns("expected"))
    return Case(work)


def _run(case: Case, out: Path, mode: str, *more: str) -> int:
    args = ["run", *[a for sql in case.sql for a in ("--sql", str(sql))], "--out", str(out),
            "--mode", mode, *more]
    try:
        return main(args) or 0
    except SystemExit as e:
        return int(e.code or 0)


def _lines(found: dict[str, list]) -> dict[str, list]:
    """Per folder, the rows in order (text: lines joined, a quoted line break kept)."""
    return {k: ("\n".join(v).splitlines() if v and isinstance(v[0], str) else v)
            for k, v in found.items()}


def _modes() -> list[tuple[Path, str]]:
    """Each case with the mode that writes what Flink's wrote: a case Flink ran in streaming
    mode in both (the stream's rows, after parity), one Flink ran in batch mode (an updating
    result only batch writes) in batch."""
    return [(case, "both" if json.loads((case / "case.json").read_text()).get(
        "mode", "streaming") == "streaming" else "batch") for case in SINKS]


@pytest.mark.parametrize("case, mode", _modes(),
                         ids=lambda x: f"sinks/{x.name}" if isinstance(x, Path) else x)
def test_insert_into_a_filesystem_table_writes_what_flink_writes(spark, tmp_path, case, mode):
    """The folders, and in each the rows in Flink's rendering: in Flink's order for a
    stream (several micro-batches), as a set for batch; nothing hidden left, a success file
    where the table asks for one."""
    meta = json.loads((case / "case.json").read_text())
    expected = _lines(json.loads((case / "expected" / "sink.json").read_text()))
    work = _copy(case, tmp_path)
    assert _run(work, tmp_path / "run", mode, "--rows-per-batch", "2") == 0
    sink = work.dir / "out"
    found = _lines(written(sink, meta["format"]))
    if mode == "batch":
        found, expected = ({k: sorted(map(str, v)) for k, v in d.items()}
                           for d in (found, expected))
    assert found == expected
    _flinks_avro_header(case, sink)
    assert not [p for p in sink.rglob(".*")], "a staging folder left behind"
    if "success-file" in (case / "ddl.sql").read_text():
        assert all((sink / folder / "_SUCCESS").is_file() for folder in expected)


def _flinks_avro_header(case: Path, sink: Path) -> None:
    """An avro case's files have the schema and codec of Flink's (a reader resolves a file
    against its writer schema)."""
    if json.loads((case / "case.json").read_text())["format"] == "avro":
        flink = json.loads((case / "expected" / "avro.json").read_text())
        headers = avro_files(sink)
        assert headers and all(h == flink for h in headers), headers


def test_rerunning_the_same_run_replaces_its_own_files(spark, tmp_path):
    """The same twinflow run (the same --out) again: its files replace those it wrote before
    (recorded in its state), so the table holds its rows once; another --out adds its own."""
    case = next(c for c in SINKS if c.name == "csv_options")
    work = _copy(case, tmp_path)
    for _ in range(2):
        assert _run(work, tmp_path / "run", "batch") == 0
    sink = work.dir / "out"
    once = _lines(json.loads((case / "expected" / "sink.json").read_text()))[""]
    assert sorted(_lines(written(sink, "csv"))[""]) == sorted(once)
    assert _run(work, tmp_path / "other", "batch") == 0
    assert sorted(_lines(written(sink, "csv"))[""]) == sorted(once * 2)


def test_an_updating_result_into_a_filesystem_table_is_refused_when_it_streams(
        spark, tmp_path, capsys):
    """As Flink's streaming mode refuses it: exit 2, the sink named, nothing written."""
    case = next(c for c in SINKS if c.name == "csv_batch_totals")
    work = _copy(case, tmp_path)
    assert _run(work, tmp_path / "run", "both") == 2
    err = capsys.readouterr().err
    assert "INSERT INTO totals" in err and "doesn't support consuming update changes" in err
    assert not (work.dir / "out").exists()


@pytest.mark.parametrize("target, needle", [
    ("'format' = 'avro', 'avro.codec' = 'deflate-9'",
     "'avro.codec' = 'deflate-9' is not supported"),
    ("'format' = 'avro', 'avro.timestamp_mapping.legacy' = 'false'",
     "WITH option 'avro.timestamp_mapping.legacy' is not supported"),
    ("'format' = 'csv', 'sink.shuffle-by-partition.enable' = 'true'",
     "WITH option 'sink.shuffle-by-partition.enable' is not supported"),
    ("'format' = 'csv', 'sink.partition-commit.policy.kind' = 'metastore,success-file'",
     "'sink.partition-commit.policy.kind' = 'metastore' is not supported"),
    ("'format' = 'json', 'json.encode.decimal-as-plain-number' = 'true'",
     "WITH option 'json.encode.decimal-as-plain-number' is not supported"),
])
def test_what_twinflow_does_not_write_is_refused_by_name_before_spark_starts(
        tmp_path, capsys, target, needle):
    (tmp_path / "ddl.sql").write_text(
        "CREATE TABLE t (a INT, s STRING) WITH ('connector' = 'filesystem', 'path' = 'in', "
        "'format' = 'csv');\n"
        f"CREATE TABLE o (a INT, s STRING) WITH ('connector' = 'filesystem', 'path' = 'out', "
        f"{target});\n")
    (tmp_path / "query.sql").write_text("INSERT INTO o SELECT a, s FROM t;\n")
    assert _run(Case(tmp_path), tmp_path / "run", "batch") == 2
    err = capsys.readouterr().err
    assert needle in err and "table o" in err and "line 2" in err


def test_a_partition_column_of_another_type_is_refused(tmp_path, capsys):
    (tmp_path / "ddl.sql").write_text(
        "CREATE TABLE t (a INT, x DOUBLE) WITH ('connector' = 'filesystem', 'path' = 'in', "
        "'format' = 'csv');\n"
        "CREATE TABLE o (a INT, x DOUBLE) PARTITIONED BY (x) WITH ('connector' = "
        "'filesystem', 'path' = 'out', 'format' = 'csv');\n")
    (tmp_path / "query.sql").write_text("INSERT INTO o SELECT a, x FROM t;\n")
    assert _run(Case(tmp_path), tmp_path / "run", "batch") == 2
    assert "partition column x is DOUBLE" in capsys.readouterr().err


@pytest.mark.parametrize("column, flink", [
    ("TIMESTAMP_LTZ(3)", "Unsupported to derive Schema for type: TIMESTAMP_LTZ(3)"),
    ("TIMESTAMP(6)", "Avro does not support TIMESTAMP type with precision: 6"),
])
def test_a_column_flinks_avro_format_cannot_write_is_refused(tmp_path, capsys, column, flink):
    """As Flink fails the job (its message quoted), before Spark starts."""
    (tmp_path / "ddl.sql").write_text(
        "CREATE TABLE t (a INT, ts TIMESTAMP(3)) WITH ('connector' = 'filesystem', "
        "'path' = 'in', 'format' = 'csv');\n"
        f"CREATE TABLE o (a INT, ts {column}) WITH ('connector' = 'filesystem', 'path' = "
        "'out', 'format' = 'avro');\n")
    (tmp_path / "query.sql").write_text("INSERT INTO o SELECT a, ts FROM t;\n")
    assert _run(Case(tmp_path), tmp_path / "run", "batch") == 2
    err = capsys.readouterr().err
    assert f"column ts is {column}" in err and flink in err and "line 2" in err


def test_scheduled_runs_write_each_intervals_files_when_it_publishes(spark, tmp_path,
                                                                      monkeypatch):
    """A scheduled query INSERTing INTO a filesystem table: an interval's rows (the windows
    its watermark closed: Flink's rows but the last window, which closes at the end of input
    only) appear in the table when the interval publishes, as ``part-<interval>-<n>`` (none
    for an interval that closed no window); a re-run and re-publish of an interval replaces
    its own files, nothing twice; a backfill's intervals replace theirs."""
    from operators_lib.runs.lifecycle import run
    from operators_lib.runs.query_config import QueryConfig
    from operators_lib.runs.spec import RunSpec, Steps
    from tests.scheduled import backfill, stream_increment

    monkeypatch.setenv("TWINFLOW_HOME", str(tmp_path / "home"))
    case = next(c for c in SINKS if c.name == "json_windows")
    work = _copy(case, tmp_path)
    sink, state, incoming = work.dir / "out", tmp_path / "state", tmp_path / "incoming"
    incoming.mkdir()
    cfg = QueryConfig(name="w", sql=work.sql, inputs={"bids": incoming}, expectations="w",
                      rows_per_batch=2)
    flink = _lines(json.loads((case / "expected" / "sink.json").read_text()))[""]
    bids = (case / "files" / "bids.json").read_text().splitlines()

    def interval(key: str, before: list[str]) -> None:
        run_dir = tmp_path / "runs" / key
        stream_increment(cfg, spark, state, run_dir)
        assert _lines(written(sink, "json")).get("", []) == before, "seen before published"
        run(RunSpec.scheduled(cfg, state, run_dir), None, Steps.PUBLISH)

    (incoming / "g00.json").write_text("\n".join(bids[:2]) + "\n")
    interval("g00", [])  # no window closed: no file at all
    assert not sink.exists() or not list(sink.iterdir())
    (incoming / "h00.json").write_text("\n".join(bids[2:5]) + "\n")
    interval("h00", [])
    assert _lines(written(sink, "json"))[""] == flink[:2]  # the window [0 s, 10 s)
    (incoming / "h01.json").write_text("\n".join(bids[5:]) + "\n")
    interval("h01", flink[:2])
    assert _lines(written(sink, "json"))[""] == flink[:-1]
    assert {p.name.rsplit("-", 1)[0] for p in sink.iterdir()} == {"part-h00", "part-h01"}
    interval("h00", flink[:-1])  # re-run and re-published
    assert _lines(written(sink, "json"))[""] == flink[:-1]
    assert {p.name.rsplit("-", 1)[0] for p in sink.iterdir()} == {"part-h00", "part-h01"}
    # A backfill recomputes both intervals in batch (no row late: the late bid counts) and
    # each one's files replace what it published.
    backfill(cfg, spark, state, tmp_path / "backfill", "g00", "h01")
    for key in ("g00", "h00", "h01"):
        run(RunSpec.scheduled(cfg, state, tmp_path / "backfill" / key), None, Steps.PUBLISH)
    rows = [json.loads(line) for line in _lines(written(sink, "json"))[""]]
    assert [(r["auction"], r["bids"]) for r in rows if r["window_end"].endswith("00:10")] \
        == [(1, 3), (2, 2)]
    assert len(rows) == len(flink) and {p.name.rsplit("-", 1)[0] for p in sink.iterdir()} \
        == {"part-g00", "part-h00", "part-h01"}


def test_a_filesystem_table_on_s3_is_written_there(spark, s3, tmp_path):
    """The table's 'path' on the loopback S3 server (the run's --out too): the same Avro
    files as Flink's (the executors write them to the store), the staging folder gone."""
    from operators_lib.engine.spark import session_conf
    from operators_lib.io import storage

    case = next(c for c in SINKS if c.name == "avro_types")
    work = _copy(case, tmp_path)
    ddl = work.dir / "ddl.sql"
    ddl.write_text(ddl.read_text().replace("'path' = 'out'", "'path' = 's3a://data/sinks/t/'"))
    out = storage.place("s3a://data/runs/sink", "--out", s3.store())
    with session_conf(spark, s3.hadoop_conf()):
        assert work.run(spark, out, mode="both", rows_per_batch=3).exit_code == 0
    sink = storage.place("s3a://data/sinks/t", "the sink", s3.store())
    local = tmp_path / "downloaded"
    for name in storage.files(sink):
        (local / name).parent.mkdir(parents=True, exist_ok=True)
        (local / name).write_bytes((sink / name).read_bytes())
    expected = _lines(json.loads((case / "expected" / "sink.json").read_text()))
    assert _lines(written(local, "avro")) == expected
    _flinks_avro_header(case, local)
    assert not [n for n in storage.files(sink) if n.startswith(".")]
