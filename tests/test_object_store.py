"""Tables on an object store: the s3a connector jars that bootstrap.sh fetches
(operators_lib/engine/stores.py) on the session's class path, a real S3-compatible server on
the loopback interface (tests/object_store.py), and twinflow reading WITH-bound tables from
it (io/remote.py) as Flink reads the same files: the source cases' files uploaded, their
results Flink's (the cases' expected/)."""

from __future__ import annotations

import json
import time

import pytest
from pyspark.sql import Row

from operators_lib.engine.spark import session_conf
from operators_lib.engine.stores import classpath
from operators_lib.io import storage
from tests.caselib import all_cases
from tests.object_store import SECRET_KEY
from tests.remote_cases import assert_reads_as_flink, upload

# One case per format (each also runs from the local disk: tests/test_source_cases.py)
CASES = [c for c in all_cases("sources") if c.dir.name in (
    "json_rules", "parquet_types", "avro_types", "csv_partitioned")]


def test_spark_writes_and_reads_parquet_on_the_loopback_s3_server(spark, s3):
    assert classpath() and "hadoop-aws" in spark.sparkContext.getConf().get(
        "spark.driver.defaultExtraClassPath")
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()  # s3a's retries bounded: no one
    assert (hadoop.get("fs.s3a.retry.limit"), hadoop.get("fs.s3a.attempts.maximum")) == (
        "2", "2")  # set them in this session (engine/spark.STORE_RETRIES)
    with session_conf(spark, s3.hadoop_conf()):
        rows = [Row(id=1, name="a"), Row(id=2, name=None)]
        spark.createDataFrame(rows, "id INT, name STRING").write.parquet("s3a://data/spark/")
        assert sorted(spark.read.parquet("s3a://data/spark/").collect()) == sorted(rows)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_table_on_s3_reads_as_flink_reads_its_files(spark, s3, tmp_path, case):
    """The case's files under s3a://data/<case>/ (its WITH 'path' pointed there; s3:// for
    one), read in both modes; the stream on Structured Streaming."""
    fs = s3.store().filesystem()
    upload(fs, case.dir / "files", f"data/{case.dir.name}")
    scheme = "s3" if case.dir.name == "json_rules" else "s3a"
    out = storage.place(f"s3a://data/out/{case.dir.name}", "--out", s3.store())
    assert_reads_as_flink(spark, case, f"{scheme}://data/{case.dir.name}/", s3.hadoop_conf(),
                          tmp_path, out)


def test_a_missing_prefix_and_a_store_that_does_not_answer_are_errors_naming_the_uri(
        spark, s3, tmp_path, capsys):
    from jobs.cli import main

    (tmp_path / "ddl.sql").write_text(
        "CREATE TABLE t (id INT) WITH ('connector' = 'filesystem', "
        "'path' = 's3a://data/absent/', 'format' = 'csv');\n")
    (tmp_path / "q.sql").write_text("SELECT id FROM t")
    args = ["run", "--sql", str(tmp_path / "ddl.sql"), "--sql", str(tmp_path / "q.sql"),
            "--out", str(tmp_path / "out")]
    with session_conf(spark, s3.hadoop_conf()):
        assert main(args) == 2
    err = capsys.readouterr().err
    assert "s3a://data/absent/" in err and SECRET_KEY not in err, err
    with session_conf(spark, s3.hadoop_conf() | {"fs.s3a.endpoint": "http://127.0.0.1:9"}):
        assert main(args) == 2
    err = capsys.readouterr().err
    assert "s3a://data/absent/" in err and SECRET_KEY not in err, err
    # --out on a store that does not answer: exit 2 naming it before any job, in seconds
    (tmp_path / "t.csv").write_text("id\n1\n")
    args = ["run", "--sql", str(tmp_path / "ddl.sql"), "--sql", str(tmp_path / "q.sql"),
            "--data", f"t={tmp_path / 't.csv'}", "--out", "s3a://data/unreachable"]
    started = time.monotonic()
    with session_conf(spark, s3.hadoop_conf() | {"fs.s3a.endpoint": "http://127.0.0.1:9"}):
        assert main(args) == 2
    assert time.monotonic() - started < 60
    err = capsys.readouterr().err
    assert "--out s3a://data/unreachable: the store does not answer" in err, err
    assert SECRET_KEY not in err


def test_data_given_as_an_s3_uri_binds_the_table_whole(spark, s3, tmp_path):
    """``--data page_views=s3a://...``: a prefix of header-CSV files, as a local directory
    would be; the WITH-less DDL of examples/pageviews."""
    from jobs.cli import main
    from tests.test_incremental_runs import REPO

    fs = s3.store().filesystem()
    for name, line in (("1.csv", "u1,/home,2024-01-01 10:00:30"),
                       ("2.csv", "u2,/cart,2024-01-01 10:00:31"), ("notes.txt", "not,a,row")):
        with fs.open_output_stream(f"data/landing/{name}") as out:
            out.write(f"user_id,url,ts\n{line}\n".encode())
    (tmp_path / "q.sql").write_text("SELECT url, COUNT(*) AS n FROM page_views GROUP BY url")
    args = ["run", "--sql", str(REPO / "examples" / "pageviews" / "page_views.sql"),
            "--sql", str(tmp_path / "q.sql"), "--data", "page_views=s3a://data/landing/",
            "--out", str(tmp_path / "out")]
    with session_conf(spark, s3.hadoop_conf()):
        assert main(args) == 0
    for name in ("stream.csv", "batch.csv"):
        rows = (tmp_path / "out" / name).read_text().splitlines()
        assert sorted(rows[1:]) == ["/cart,1", "/home,1"], (name, rows)


def test_a_run_with_its_state_and_outputs_on_s3_resumes_and_equals_flink(spark, s3):
    """``twinflow run --out s3a://...``: staged input, checkpoint, changelog, result and
    outputs on the S3 server. An updating GROUP BY stopped after two micro-batches and resumed
    from its checkpoint there gives Flink's changelog and result."""
    from tests.caselib import Case, assert_changelog, assert_final, assert_resumes
    from tests.test_incremental_runs import REPO

    case = Case(REPO / "tests" / "cases" / "group" / "having")
    store = s3.store()
    out = storage.place("s3a://data/runs/having", "--out", store)
    with session_conf(spark, s3.hadoop_conf()):
        assert_resumes(case, spark, out, rows_per_batch=2, stop_after=2)
    assert_changelog(case, out)
    assert_final(case, out, "batch.csv", "batch_final.csv")
    assert SECRET_KEY not in (out / "report.json").read_text()


def test_the_gateway_resets_a_connection_waiting_for_its_answer():
    """The outage test's cut is a reset the client sees at once, not a silent connection it
    waits out (s3a's read timeout is 200 s: CI once measured 204 s for the 'bounded' failure,
    the gateway's close() having left the socket open under a pipe thread's recv())."""
    import socket
    import threading

    from tests.object_store import Gateway

    mute = socket.socket()  # a server that accepts and never answers
    mute.bind(("127.0.0.1", 0))
    mute.listen(1)
    held: list[socket.socket] = []
    threading.Thread(target=lambda: held.append(mute.accept()[0]), daemon=True).start()
    with Gateway(mute.getsockname()[1]) as gateway:
        client = socket.create_connection(("127.0.0.1", gateway.port), timeout=5)
        client.sendall(b"GET / HTTP/1.1\r\n\r\n")
        time.sleep(0.3)
        gateway.down()
        started = time.monotonic()
        with pytest.raises(ConnectionResetError):
            client.recv(1)
        assert time.monotonic() - started < 1
    client.close()
    mute.close()


def test_a_run_killed_or_cut_off_from_s3_mid_stream_leaves_no_result_and_the_next_is_whole(
        spark, s3, tmp_path):
    """``twinflow run --out s3a://...`` killed (SIGKILL, the driver and its JVM) once its
    stream has committed micro-batches: no report.json, so nothing there looks complete. The
    same command again, its store taken away mid-stream (every connection reset, the port
    closed; tests/object_store.Gateway): a failed run within a bounded time (s3a's retries
    bounded by twinflow's defaults), no report.json. Once the store is back, the same command
    recomputes and gives Flink's result, nothing lost or twice."""
    import os
    import signal
    import subprocess
    import sys

    from jobs.cli import main
    from tests.caselib import Case, assert_final
    from tests.object_store import Gateway
    from tests.test_incremental_runs import REPO

    case = Case(REPO / "tests" / "cases" / "group" / "having")
    args = ["run", *[a for sql in case.sql for a in ("--sql", str(sql))],
            *[a for t, p in case.data.items() for a in ("--data", f"{t}={p}")],
            "--out", "s3a://data/runs/killed", "--rows-per-batch", "3"]
    out = storage.place("s3a://data/runs/killed", "--out", s3.store())
    commits = out / "_state" / "checkpoint" / "commits"

    def started(endpoint: str) -> subprocess.Popen:
        """The run in a process of its own, once its stream has committed a micro-batch."""
        storage.rmtree(commits)
        conf = [a for k, v in (s3.hadoop_conf() | {"fs.s3a.endpoint": endpoint}).items()
                for a in ("--conf", f"spark.hadoop.{k}={v}")]
        proc = subprocess.Popen([sys.executable, "-m", "jobs.cli", *args, *conf],
                                cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)},
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                start_new_session=True)
        deadline = time.monotonic() + 240
        while not (commits.exists() and any(commits.glob("[0-9]*"))):
            assert proc.poll() is None and time.monotonic() < deadline, "no micro-batch " \
                f"committed: {proc.stderr.read().decode()[-3000:] if proc.poll() else ''}"
            time.sleep(0.5)
        return proc

    proc = started(s3.endpoint)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (out / "report.json").exists()
    # The killed run's lease on its state (state/lease.py) lapses a minute after its last
    # renewal, when the next run would take it over (tests/test_lease.py): lapsed here.
    lease = out / "_state" / ".lease"
    assert json.loads(lease.read_text())["pid"] != os.getpid()
    lease.unlink()

    with Gateway(s3.port) as gateway:
        proc = started(gateway.endpoint)
        gateway.down()
        cut = time.monotonic()
        _, err = proc.communicate(timeout=300)
        failed_after = time.monotonic() - cut
        gateway.up()
    assert proc.returncode == 3, err.decode()[-3000:]
    # measured: 4 s; with Hadoop's own retries (engine/spark.STORE_RETRIES unset) 131 s
    assert failed_after < 60, failed_after
    assert not (out / "report.json").exists()
    lease.unlink(missing_ok=True)  # the failed run could not give it back: lapsed here too
    with session_conf(spark, s3.hadoop_conf()):
        assert main(args) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["stream"]["recomputed_from_scratch"], report["stream"]
    assert_final(case, out, "stream.csv", "stream_final.csv")  # an updated SUM: no row twice
    assert_final(case, out, "batch.csv", "batch_final.csv")


def test_state_commands_on_s3_snapshot_verify_and_roll_back(spark, s3, tmp_path, capsys):
    """``twinflow state snapshot|verify|list|rollback --out s3a://...`` (the snapshot's
    staged parts copied: S3 has no links; the rollback's moves copies): a stream stopped after
    one micro-batch, snapshot, continued, verified, rolled back and continued again gives
    the query's result."""
    from jobs.cli import main
    from tests.test_failed_runs import _args, _expected
    from tests.test_snapshots import _state

    conf = [a for k, v in s3.hadoop_conf().items() for a in ("--conf", f"spark.hadoop.{k}={v}")]
    out = "s3a://data/state-commands/out"

    def run(*extra: str) -> None:  # two rows per micro-batch: three in all
        args = [a if a != str(tmp_path / "out") else out
                for a in _args(tmp_path, "--rows-per-batch", "2", *extra)]
        assert main(args) == 0, capsys.readouterr().err
        capsys.readouterr()

    with session_conf(spark, s3.hadoop_conf()):
        run("--stop-after-batches", "1")
        code, snap, err = _state(tmp_path, capsys, "snapshot", "--out", out, *conf)
        assert code == 0, err
        assert snap["batch_id"] == 0 and snap["bytes"] > 0
        run()  # to the end
        code, verified, err = _state(tmp_path, capsys, "verify", "--out", out, "--snapshot",
                                     snap["id"], *conf)
        assert code == 0, err
        assert (verified["verdict"], verified["snapshot_batch_id"]) == ("equal", 0), verified
        code, listed, err = _state(tmp_path, capsys, "list", "--out", out, *conf)
        assert [s["id"] for s in listed["snapshots"]] == [snap["id"]], err
        code, back, err = _state(tmp_path, capsys, "rollback", "--out", out, "--snapshot",
                                 snap["id"], *conf)
        assert (code, back and back["batch_id"]) == (0, 0), err
        run()  # the stopped run's state again: resumed from micro-batch 1
    place = storage.place(out, "out", s3.store())
    report = json.loads((place / "report.json").read_text())
    assert "recomputed_from_scratch" not in report["stream"], report["warnings"]
    rows = {tuple(r.split(",")) for r in (place / "stream.csv").read_text().splitlines()[1:]}
    assert rows == _expected()
    state = place / "_state"
    assert not list(state.glob(".verify-*"))  # the scratch is gone
    assert (state / "snapshots" / snap["id"] / "staged" / "t" / "part-000000.parquet").exists()


def test_a_csv_file_on_s3_is_cut_and_parsed_by_the_executors_as_a_local_one(spark, s3, tmp_path):
    """A file on a store is scanned for where it may be cut by the executors (the driver reads
    none of its bytes), in pieces: the same pieces, rows and digest as the local file."""
    from operators_lib.io import ingest
    from tests.test_ingest import HEADER, TABLE

    data = HEADER + b"".join(b"k%d,%d.5,1,2024-01-01,2024-01-01 00:00:%02d\n" % (i, i, i)
                             for i in range(40))
    (tmp_path / "t.csv").write_bytes(data)
    with s3.store().filesystem().open_output_stream("data/pieces/t.csv") as out:
        out.write(data)
    got = {}
    for where, path in (("local", tmp_path / "t.csv"), ("s3", "s3a://data/pieces/t.csv")):
        parsed = ingest.parse(spark, {"t": ingest.TableInput(TABLE, [path])},
                              tmp_path / where / "parsed", piece_bytes=300, store=s3.store())
        got[where] = ([(p.rows, p.rejected) for p in parsed.pieces], parsed.digest())
    assert got["s3"] == got["local"] and len(got["s3"][0]) > 3
    assert sum(rows for rows, _ in got["s3"][0]) == 40
