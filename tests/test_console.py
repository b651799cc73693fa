"""What a user sees: a line per step and a summary; engine noise only in the log or with
--verbose. The noise comes from child processes writing to inherited file descriptors (the
Spark JVM, its Python workers), so the CLI runs in a subprocess here, as a user runs it."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from jobs import console as console_mod
from jobs.console import Console

REPO = Path(__file__).resolve().parents[1]
DDL = """CREATE TABLE t (
  k STRING,
  v INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
);
"""
# GROUP BY runs on transformWithStateInPandas, whose Python workers print() to stderr.
QUERY = "SELECT k, COUNT(*) AS c, SUM(v) AS s FROM t GROUP BY k\n"
CSV = """k,v,ts
a,1,2024-01-01 00:00:01
a,2,2024-01-01 00:00:02
b,two,2024-01-01 00:00:03
b,4,2024-01-01 00:00:04
"""
WORKER_PRINT = "TransformWithStateInPandas Python worker"
# A progress line (non-terminal output: one every few seconds while a step runs)
PROGRESS = re.compile(r"^(spark|ingest|stream|batch|parity) +\S.* \d+ s$")


def _cli(tmp: Path, *extra: str, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess:
    (tmp / "ddl.sql").write_text(DDL)
    (tmp / "q.sql").write_text(QUERY)
    (tmp / "t.csv").write_text(CSV)
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYSPARK_PYTHON": sys.executable, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "jobs.cli", "run", "--sql", str(tmp / "ddl.sql"),
         "--sql", str(tmp / "q.sql"), "--data", f"t={tmp / 't.csv'}", "--out", str(tmp / "out"),
         "--rows-per-batch", "2", *extra],
        capture_output=True, text=True, env=env, timeout=600)


def test_default_output_is_step_lines_and_a_summary(tmp_path):
    proc = _cli(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr == ""
    lines = [ln for ln in proc.stdout.splitlines() if not PROGRESS.match(ln)]
    out = tmp_path / "out"
    expected = [
        r"ingest  t: 3 rows, 1 rejected  \d+\.\d s",
        r"stream  \d+ micro-batches  2 rows \(changelog 2\)  \d+\.\d s",
        r"batch   2 rows  \d+\.\d s",
        r"parity  equal",
        r"",
        r"ran      ddl\.sql, q\.sql \(both, 2 rows per micro-batch\)",
        r"parity   equal",
        r"rows     batch 2, stream 2 \(changelog 2\), late 0, rejected 1",
        rf"outputs  {re.escape(str(out))}/  .*report\.json",
        rf"log      {re.escape(str(out / 'engine.log'))}",
        r"exit     0  \(\d+\.\d s\)",
    ]
    assert len(lines) == len(expected), proc.stdout
    for line, pattern in zip(lines, expected):
        assert re.fullmatch(pattern, line), (pattern, proc.stdout)
    # the engines' output is kept, in the log
    log = (out / "engine.log").read_text()
    assert WORKER_PRINT in log and " WARN " in log


def test_spark_submits_settings_win_over_twinflows_defaults(tmp_path):
    """Under spark-submit too: its --conf beats twinflow's default, and a local master's Python
    processes start through twinflow's launcher (operators_lib/engine/worker_daemon.py)."""
    script = tmp_path / "show.py"
    script.write_text(textwrap.dedent("""
        from operators_lib.engine.spark import get_spark
        spark = get_spark()
        print("SETTINGS", spark.sparkContext.master,
              spark.conf.get("spark.sql.shuffle.partitions"), spark.sparkContext.pythonExec)
    """))
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYSPARK_PYTHON": sys.executable}
    proc = subprocess.run([str(Path(sys.executable).parent / "spark-submit"), "--master",
                           "local[1]", "--conf", "spark.sql.shuffle.partitions=7", str(script)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [line] = [x for x in proc.stdout.splitlines() if x.startswith("SETTINGS")]
    _, master, partitions, python = line.split()
    assert (master, partitions) == ("local[1]", "7")
    assert Path(python).name.startswith("python-")


def test_verbose_shows_engine_output_and_the_users_spark_settings_win(tmp_path):
    """--verbose: what the engines print reaches the console, no log file. And the user's
    Spark settings: spark-defaults.conf beats twinflow's default (2 shuffle partitions);
    --conf beats spark-defaults.conf; where neither says anything, twinflow's default holds.
    (One CLI run for both: each starts a JVM.)"""
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    (conf_dir / "spark-defaults.conf").write_text(
        "spark.sql.shuffle.partitions 5\nspark.app.name from-defaults\n")
    proc = _cli(tmp_path, "--mode", "stream", "--verbose", "--conf", "spark.app.name=from-cli",
                env={"SPARK_CONF_DIR": str(conf_dir)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert WORKER_PRINT in proc.stderr and " WARN " in proc.stderr
    assert re.search(r"^stream  \d+ micro-batches  2 rows", proc.stdout, re.M)
    assert not (tmp_path / "out" / "engine.log").exists()
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["spark"] == {"master": "local[2]", "app": "from-cli", "shuffle_partitions": 5}


def test_bad_input_is_one_line_on_stderr_and_writes_nothing(tmp_path):
    proc = _cli(tmp_path, "--data", f"u={tmp_path / 't.csv'}")
    assert proc.returncode == 2
    assert proc.stdout.strip() == "" or all(PROGRESS.match(ln)
                                            for ln in proc.stdout.splitlines()), proc.stdout
    assert proc.stderr.splitlines() == [
        "twinflow: error: --data for undeclared table(s): u (declared: t)"]
    assert not (tmp_path / "out").exists()


def test_engine_output_to_redirects_child_processes_not_the_console(tmp_path):
    """What a child process (like the Spark JVM) writes to fds 1 and 2 lands in the log, also
    after the block; the console's streams still reach the original stdout and stderr."""
    script = textwrap.dedent(f"""
        import subprocess, sys, time
        from pathlib import Path
        from jobs.console import engine_output_to
        with engine_output_to(Path({str(tmp_path / 'engine.log')!r})) as (out, err):
            child = subprocess.Popen(["sh", "-c", "echo child-out; echo child-err >&2; "
                                      "sleep 1; echo child-later >&2"])
            print("own print")
            out.write("console out\\n")
            err.write("console err\\n")
        print("after the block")
        child.wait()
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["console out", "after the block"]
    assert proc.stderr == "console err\n"
    log = (tmp_path / "engine.log").read_text().splitlines()
    assert sorted(log) == ["child-err", "child-later", "child-out", "own print"]


def test_progress_off_a_terminal_is_a_line_now_and_then(monkeypatch):
    """A changed progress line at most every EVERY_S seconds, an unchanged one every
    HEARTBEAT_S seconds; step lines always."""
    clock = [100.0]
    monkeypatch.setattr(console_mod.time, "monotonic", lambda: clock[0])
    out = io.StringIO()
    con = Console(out, out)

    def at(seconds: float, label: str, text: str) -> None:
        clock[0] = 100.0 + seconds
        con.activity(label, text)

    at(0, "stream", "micro-batch 1")
    at(console_mod.EVERY_S - 1, "stream", "micro-batch 2")  # too soon after the last line
    at(console_mod.EVERY_S, "stream", "micro-batch 3")
    con.step("stream", "3 micro-batches")
    at(console_mod.EVERY_S + 1, "batch", "running")  # too soon after the step line
    at(2 * console_mod.EVERY_S + 1, "batch", "running")
    at(3 * console_mod.EVERY_S + 1, "batch", "running")  # unchanged: waits for a heartbeat
    at(2 * console_mod.EVERY_S + 1 + console_mod.HEARTBEAT_S, "batch", "running")
    every, beat = console_mod.EVERY_S, console_mod.HEARTBEAT_S
    assert out.getvalue().splitlines() == [
        f"stream  micro-batch 3  {every:.0f} s", "stream  3 micro-batches",
        f"batch   running  {every:.0f} s", f"batch   running  {every + beat:.0f} s"]


def test_verbose_console_prints_no_progress():
    out = io.StringIO()
    con = Console(out, out, progress=False)
    with con.ticking():
        con.activity("spark", "starting")
    con.step("batch", "2 rows")
    assert out.getvalue() == "batch   2 rows\n"
