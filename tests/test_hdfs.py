"""Tables on HDFS: a real MiniDFSCluster on the loopback interface (tests/hdfs_cluster.py);
Spark reads hdfs:// with the Hadoop client in pyspark's jars, twinflow's driver lists and its
tasks read through WebHDFS (io/remote.py). The source cases' files uploaded give Flink's results
(the cases' expected/); a scheduled query whose landing directory is on HDFS takes each run's
new files only."""

from __future__ import annotations

import time

import pytest

from operators_lib.engine.spark import session_conf
from operators_lib.io import storage
from operators_lib.runs.query_config import QueryConfig
from tests.caselib import all_cases
from tests.remote_cases import assert_reads_as_flink, upload
from tests.scheduled import batch_parity, stream_increment
from tests.test_dags import spark_steps  # noqa: F401  (a fixture)
from tests.test_incremental_runs import HOP, REPO

# A text format in key=value folders and Parquet's row groups read by byte range (every
# format runs on the S3 server: tests/test_object_store.py)
CASES = [c for c in all_cases("sources") if c.dir.name in ("csv_partitioned", "parquet_types")]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_table_on_hdfs_reads_as_flink_reads_its_files(spark, hdfs, tmp_path, case):
    upload(hdfs.filesystem(), case.dir / "files", f"/cases/{case.dir.name}")
    out = storage.place(f"{hdfs.uri}/out/{case.dir.name}", "--out", hdfs.store())
    assert_reads_as_flink(spark, case, f"{hdfs.uri}/cases/{case.dir.name}/",
                          hdfs.hadoop_conf(), tmp_path, out)


def test_a_scheduled_query_landing_on_hdfs_takes_each_runs_new_files(spark, hdfs, tmp_path):
    """The HOP scenario of tests/test_incremental_runs.py with its landing directory on HDFS
    (a config's inputs URI): run 2 stages the second file only, parity holds in each run."""
    (tmp_path / "q.sql").write_text(HOP)
    cfg = QueryConfig(name="q", sql=[REPO / "examples" / "pageviews" / "page_views.sql",
                                     tmp_path / "q.sql"],
                      inputs={"page_views": f"{hdfs.uri}/landing/page_views"},
                      expectations="page_views", publish_format="csv", rows_per_batch=100)
    fs = hdfs.filesystem()
    files = {1: ["u1,/home,2024-01-01 10:00:30", "u2,/home,2024-01-01 10:01:20"],
             2: ["u4,/home,2024-01-01 10:00:50", "u5,/home,2024-01-01 10:04:10"]}
    published = {1: ["2024-01-01 09:59:00.000,2024-01-01 10:01:00.000,/home,1"],
                 2: ["2024-01-01 10:00:00.000,2024-01-01 10:02:00.000,/home,3",
                     "2024-01-01 10:01:00.000,2024-01-01 10:03:00.000,/home,1"]}
    with session_conf(spark, hdfs.hadoop_conf()):
        for run, lines in files.items():
            with fs.open_output_stream(f"/landing/page_views/{run}.csv") as out:
                out.write(("\n".join(["user_id,url,ts", *lines]) + "\n").encode())
            run_dir = tmp_path / f"run{run}"
            report = stream_increment(cfg, spark, tmp_path / "state", run_dir)
            assert report["new_input_rows"] == {"page_views": 2}, report
            assert (run_dir / "stream.csv").read_text().splitlines()[1:] == published[run]
            parity = batch_parity(cfg, spark, tmp_path / "state", run_dir)
            assert parity["verdict"] == "equal_for_emitted_rows", parity


def test_a_namenode_that_does_not_answer_is_an_error_naming_the_uri(spark, tmp_path, capsys):
    from jobs.cli import main
    from tests.cluster import free_port

    (tmp_path / "q.sql").write_text("SELECT user_id FROM page_views")
    uri = f"hdfs://127.0.0.1:{free_port()}/landing/"
    args = ["run", "--sql", str(REPO / "examples" / "pageviews" / "page_views.sql"),
            "--sql", str(tmp_path / "q.sql"), "--data", f"page_views={uri}",
            "--out", str(tmp_path / "out")]
    started = time.monotonic()
    assert main(args) == 2
    assert time.monotonic() - started < 30
    assert uri in capsys.readouterr().err


def test_a_run_with_its_state_and_outputs_on_hdfs_resumes_and_equals_flink(spark, hdfs):
    """``twinflow run --out hdfs://...``: the staged input, the checkpoint, the changelog, the
    result and the outputs on HDFS. An updating GROUP BY stopped after two micro-batches and
    resumed from its checkpoint there gives Flink's changelog and final result."""
    from tests.caselib import Case, assert_changelog, assert_final, assert_resumes

    case = Case(REPO / "tests" / "cases" / "group" / "having")
    out = storage.place(f"{hdfs.uri}/runs/having", "--out", hdfs.store())
    with session_conf(spark, hdfs.hadoop_conf()):
        assert_resumes(case, spark, out, rows_per_batch=2, stop_after=2)
    assert_changelog(case, out)
    assert_final(case, out, "batch.csv", "batch_final.csv")
    assert str(out).startswith("hdfs://") and not (REPO / "hdfs:").exists()


@pytest.mark.usefixtures("spark_steps")
def test_a_dag_run_with_twinflow_home_on_hdfs(airflow_env, spark, hdfs, tmp_path):
    """The query DAG (its Spark steps in this process: tests/test_dags.spark_steps) with
    $TWINFLOW_HOME and its input on HDFS: state, run directory, published interval (whole:
    _SUCCESS), LATEST, ops report and audit there; the lease given back; nothing local but
    the shipped code and GX's Data Docs."""
    import json

    from tests.caselib import read_csv
    from tests.test_dags import SEED, SEED_RESULT, _config, _run, _task_states

    airflow_env.setenv("TWINFLOW_HOME", f"{hdfs.uri}/home")
    airflow_env.setenv("TWINFLOW_LOCAL_DIR", str(tmp_path / "local"))
    config = _config(tmp_path, "tmall_max_price")
    cfg = json.loads(config.read_text())
    cfg["inputs"] = {"tmall_item": f"{hdfs.uri}/incoming/"}
    cfg["spark_conf"] |= {f"spark.hadoop.{k}": v for k, v in hdfs.hadoop_conf().items()}
    config.write_text(json.dumps(cfg))
    seed = SEED / "incoming" / "tmall_item" / "2017-11-11T10.csv"
    with hdfs.filesystem().open_output_stream("/incoming/a.csv") as out:
        out.write(seed.read_bytes())
    with session_conf(spark, hdfs.hadoop_conf()):
        run = _run(airflow_env, config, 10)
    assert run.state == "success", _task_states(run)
    home = storage.place(f"{hdfs.uri}/home", "home", hdfs.store())
    published = home / "published" / "q_tmall_max_price"
    published /= (published / "LATEST").read_text().strip()
    assert (published / "_SUCCESS").exists()
    rows = {",".join(r) for r in read_csv(published / "stream.csv")[1:]}
    assert rows and rows <= SEED_RESULT, rows
    assert "20240101T100000" in (home / "reports" / "q_tmall_max_price.html").read_text()
    state = home / "state" / "q_tmall_max_price"
    assert (state / "checkpoint").exists() and not (state / ".lease").exists()
    assert sorted(p.name for p in (tmp_path / "local").iterdir()) == ["dist", "gx"]
