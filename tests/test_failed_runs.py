"""Runs that fail must fail loudly and leave state from which the next run succeeds:
a changelog segment lost or a malformed changelog (exit 3, no result written), a damaged
checkpoint (the next run recomputes from scratch and says so), a driver JVM that dies
(promptly, with what to change, not a hang)."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq

from jobs.cli import main

REPO = Path(__file__).resolve().parents[1]
DDL = "CREATE TABLE t (k STRING, v INT);\n"
QUERY = "SELECT k, COUNT(*) AS n, SUM(v) AS s FROM t GROUP BY k\n"
ROWS = [("a", 1), ("a", 2), ("b", 3), ("a", 4), ("b", 5), ("c", 6)]


def _args(tmp: Path, *extra: str) -> list[str]:
    (tmp / "ddl.sql").write_text(DDL)
    (tmp / "q.sql").write_text(QUERY)
    (tmp / "t.csv").write_text("k,v\n" + "".join(f"{k},{v}\n" for k, v in ROWS))
    return ["run", "--sql", str(tmp / "ddl.sql"), "--sql", str(tmp / "q.sql"),
            "--data", f"t={tmp / 't.csv'}", "--out", str(tmp / "out"), "--mode", "stream",
            "--rows-per-batch", "1", *extra]


def _expected() -> set[tuple[str, ...]]:
    """GROUP BY k: COUNT(*), SUM(v), from its definition."""
    groups = defaultdict(list)
    for k, v in ROWS:
        groups[k].append(v)
    return {(k, str(len(vs)), str(sum(vs))) for k, vs in groups.items()}


def _rows(path: Path) -> set[tuple[str, ...]]:
    with open(path, newline="") as fh:
        return {tuple(r) for r in list(csv.reader(fh))[1:]}


def _stopped_after_two_batches(spark, tmp: Path, capsys) -> tuple[Path, str]:
    assert main(_args(tmp, "--stop-after-batches", "2")) == 0, capsys.readouterr().err
    capsys.readouterr()
    return tmp / "out" / "_state", (tmp / "out" / "stream.csv").read_text()


def _recomputes_and_says_so(tmp: Path, capsys) -> None:
    """The next identical run: the failed run's state is not resumed but recomputed, loudly."""
    code = main(_args(tmp))
    err = capsys.readouterr().err
    assert code == 0, err
    assert "did not finish" in err and "recomputed from scratch" in err
    report = (tmp / "out" / "report.json").read_text()
    assert '"recomputed_from_scratch": "the previous stream run did not finish' in report
    assert _rows(tmp / "out" / "stream.csv") == _expected()


def test_a_lost_changelog_segment_fails_and_writes_no_result(spark, tmp_path, capsys):
    state, stopped = _stopped_after_two_batches(spark, tmp_path, capsys)
    shutil.rmtree(state / "changelog" / "batch-00000001")
    code = main(_args(tmp_path))  # resume: the changelog now misses the second micro-batch
    err = capsys.readouterr().err
    assert code == 3, err
    assert "micro-batch(es) 1 is missing" in err
    assert (tmp_path / "out" / "stream.csv").read_text() == stopped  # nothing written
    _recomputes_and_says_so(tmp_path, capsys)


def test_a_malformed_changelog_fails_with_its_problems(spark, tmp_path, capsys):
    state, stopped = _stopped_after_two_batches(spark, tmp_path, capsys)
    for part in (state / "changelog" / "batch-00000000").glob("part-*"):  # +I of group a gone
        pq.write_table(pq.read_table(part).slice(0, 0), part)
        part.with_name(f".{part.name}.crc").unlink()  # Spark would see the file was altered
    code = main(_args(tmp_path))
    err = capsys.readouterr().err
    assert code == 3, err
    assert "retracts 1 row(s) that are not present" in err
    assert "a retraction of ('a', 1, 1" in err
    assert (tmp_path / "out" / "stream.csv").read_text() == stopped
    _recomputes_and_says_so(tmp_path, capsys)


def test_a_damaged_checkpoint_fails_then_is_recomputed_with_a_warning(spark, tmp_path, capsys):
    state, _ = _stopped_after_two_batches(spark, tmp_path, capsys)
    for f in (state / "checkpoint" / "offsets").iterdir():
        f.write_text("garbage")
    code = main(_args(tmp_path))
    assert code == 3, capsys.readouterr().err
    capsys.readouterr()
    _recomputes_and_says_so(tmp_path, capsys)


def test_the_driver_jvm_exits_on_out_of_memory(spark):
    """Where twinflow launches the driver JVM, it launches it with ExitOnOutOfMemoryError."""
    args = spark._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()
    assert "-XX:+ExitOnOutOfMemoryError" in list(args)


def test_a_result_larger_than_the_driver_heap_is_written_by_the_executors(tmp_path):
    """A LEFT JOIN of 800 x 800 rows on one key: 640,000 result rows of ~400 bytes (~260 MB of
    CSV) from a run whose driver JVM has a 256 MB heap, set as a user sets it
    (PYSPARK_SUBMIT_ARGS; user settings win over twinflow's). Collected into the driver, as
    batch mode once did, this died out of memory; the executors write it."""
    (tmp_path / "ddl.sql").write_text("CREATE TABLE a (k INT, x STRING);\n"
                                      "CREATE TABLE b (k INT, y STRING);\n")
    (tmp_path / "q.sql").write_text("SELECT a.k, a.x, b.y FROM a LEFT JOIN b ON a.k = b.k\n")
    for name in ("a", "b"):
        (tmp_path / f"{name}.csv").write_text(
            f"k,{'x' if name == 'a' else 'y'}\n"
            + "".join(f"1,{name * 200}{i}\n" for i in range(800)))
    env = dict(os.environ, PYTHONPATH=str(REPO), PYSPARK_PYTHON=sys.executable,
               PYSPARK_SUBMIT_ARGS="--driver-memory 256m --conf spark.testing.reservedMemory=0 "
                                   "pyspark-shell")
    proc = subprocess.run(
        [sys.executable, "-m", "jobs.cli", "run", "--sql", str(tmp_path / "ddl.sql"),
         "--sql", str(tmp_path / "q.sql"), "--data", f"a={tmp_path / 'a.csv'}",
         "--data", f"b={tmp_path / 'b.csv'}", "--mode", "batch", "--out", str(tmp_path / "out")],
        env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with (tmp_path / "out" / "batch.csv").open() as fh:
        assert sum(1 for _ in fh) == 1 + 800 * 800


_DIES = """
import os, signal, sys
from operators_lib.engine.spark import engine_failures, get_spark
spark = get_spark("local[1]", app="dies")
with engine_failures():
    os.kill(spark.sparkContext._gateway.proc.pid, signal.SIGKILL)  # as ExitOnOutOfMemoryError
    spark.range(10).count()
"""


def test_a_driver_jvm_that_dies_ends_the_run_with_what_to_change(tmp_path):
    """The driver JVM ends itself when out of heap (-XX:+ExitOnOutOfMemoryError: without it an
    OutOfMemoryError in a thread nothing restarts leaves the job waiting forever). Whatever
    call notices first, the run ends at once with an EngineError saying what to change."""
    proc = subprocess.run([sys.executable, "-c", _DIES], env=dict(
        os.environ, PYTHONPATH=str(REPO), PYSPARK_PYTHON=sys.executable), capture_output=True,
        text=True, timeout=120, cwd=tmp_path)  # a hang fails
    assert proc.returncode != 0
    assert "EngineError: the Spark driver JVM died" in proc.stderr, proc.stderr[-3000:]
    assert "--driver-memory" in proc.stderr and "SPARK_DRIVER_MEMORY" in proc.stderr
