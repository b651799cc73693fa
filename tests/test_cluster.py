"""twinflow on a Spark standalone cluster: a master and two one-core workers on the loopback
interface (tests/cluster.py), so executors are JVMs and Python workers of their own, started
by the workers, that import twinflow from the zip the driver ships
(operators_lib/engine/shipping.py).

One test (one cluster: every JVM counts on this 2-core machine), with input, state and outputs
on the loopback S3 server (tests/object_store.py): corpus cases in stream mode give Flink's
results; then a query DAG's steps (stream, and batch for parity) are submitted to the cluster
(SparkSubmitOperator with ``--py-files``) and publish.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

from tests.caselib import CASES, Case, assert_final, parquet_result
from tests.cluster import StandaloneCluster, cluster_jvm_options
from tests.test_dags import SEED, _config, _run, _task_states

REPO = Path(__file__).resolve().parents[1]
# The slot pages of the changelog operators (a join feeding an aggregate; TopN keeps its pages
# the same way); state per key with event-time timers (OVER) runs in the DAG run below, as
# windows keep theirs. The other operators run the same runtimes, each covered locally; on this
# 2-core machine every cluster case costs half a minute.
# group/python_udf_keys: Python UDFs, their module on no executor's path (pickled by value).
CLUSTER_CASES = ["join/join_then_aggregate", "group/python_udf_keys"]


def test_corpus_cases_and_a_dag_run_on_a_standalone_cluster_all_on_s3(airflow_env, s3,
                                                                     tmp_path, caplog, capfd):
    """Input, state and outputs only on the S3 server: the cases' input and --out, the DAG's
    $TWINFLOW_HOME and input (keys in an Airflow Connection, the endpoint in the config's
    ``spark.hadoop.*``); each worker in its own work directory, nothing shared with the
    driver but the shipped code. The Connection's secret key appears in no task's log and in
    no file the run left on the store but the data."""
    import logging

    from operators_lib.io import storage
    from tests.object_store import ACCESS_KEY, SECRET_KEY

    caplog.set_level(logging.INFO)

    public = {k: v for k, v in s3.hadoop_conf().items() if "key" not in k}
    conf = {f"spark.hadoop.{k}": v for k, v in public.items()}
    with StandaloneCluster(tmp_path / "cluster") as master:
        proc = subprocess.run(
            [sys.executable, "-m", "tests.cluster_cases", "--master", master, "--out",
             "s3a://data/cluster/cases", *CLUSTER_CASES,
             *[a for k, v in conf.items() for a in ("--conf", f"{k}={v}")]],
            capture_output=True, text=True, cwd=REPO,
            # the keys as a user's environment has them (Spark copies them to s3a's settings)
            env={**os.environ, "PYTHONPATH": str(REPO), "AWS_ACCESS_KEY_ID": ACCESS_KEY,
                 "AWS_SECRET_ACCESS_KEY": SECRET_KEY}, timeout=900)
        assert proc.returncode == 0, proc.stderr[-4000:]
        ran = json.loads(proc.stdout.strip().splitlines()[-1])
        # On a cluster twinflow's local defaults do not apply: Spark's UI is up.
        assert ran["ui"] and ran["ui"].startswith("http"), ran["ui"]
        # the executors' Python workers imported the shipped zip, not the driver's checkout
        assert all("/operators_lib-" in p and ".zip/" in p for p in ran["executor_code"]), ran
        for case_id in CLUSTER_CASES:
            result = ran["cases"][case_id]
            assert result["exit_code"] == 0, (case_id, result)
            assert result["micro_batches"] >= 3, (case_id, result)
            # Several micro-batches, not Flink's watermark per row: Flink's batch final.
            out = storage.place(f"s3a://data/cluster/cases/{case_id.replace('/', '__')}/out",
                                "out", s3.store())
            assert_final(Case(CASES / case_id), out, "stream.csv", "batch_final.csv")

        airflow_env.setenv("AIRFLOW_CONN_SPARK_DEFAULT", master)
        airflow_env.setenv("AIRFLOW_CONN_TWINFLOW_S3", json.dumps(
            {"conn_type": "aws", "login": ACCESS_KEY, "password": SECRET_KEY}))
        airflow_env.setenv("TWINFLOW_HOME", "s3a://data/cluster/home")
        airflow_env.setenv("TWINFLOW_LOCAL_DIR", str(tmp_path / "local"))
        config = _config(tmp_path, "tmall_max_price")
        cfg = json.loads(config.read_text())  # the executors' JVM options, as cluster_cases'
        cfg["spark_conf"] |= {"spark.executor.extraJavaOptions": cluster_jvm_options(),
                              "spark.sql.shuffle.partitions": "2", **conf}
        cfg |= {"inputs": {"tmall_item": "s3a://data/cluster/incoming/"},
                "store_conn_id": "twinflow_s3"}
        cfg.pop("publish_format")  # the default: Parquet
        config.write_text(json.dumps(cfg))
        seed = SEED / "incoming" / "tmall_item" / "2017-11-11T10.csv"
        storage.place("s3a://data/cluster/incoming/a.csv", "input", s3.store()).write_bytes(
            seed.read_bytes())
        capfd.readouterr()
        run = _run(airflow_env, config, 10)
        assert run.state == "success", _task_states(run)
        printed = capfd.readouterr()
        logs = caplog.text + printed.out + printed.err
        assert "spark-submit" in logs.lower()  # the Spark steps' logs are among them
        assert SECRET_KEY not in logs
    home = storage.place("s3a://data/cluster/home", "home", s3.store())
    published = home / "published" / "q_tmall_max_price"
    published /= (published / "LATEST").read_text().strip()
    # the watermark is 10:02 (1 minute behind 10:03): ITEM001 and ITEM002 are out, as
    # Parquet with the columns' types (published whole: _SUCCESS)
    assert (published / "_SUCCESS").exists() and not (published / "stream.csv").exists()
    assert parquet_result(published / "stream.parquet") == (
        ["itemID", "itemType", "onSellTime", "price", "maxPrice"],
        [("ITEM001", "Electronic", datetime(2017, 11, 11, 10, 1), 20.0, 20.0),
         ("ITEM002", "Electronic", datetime(2017, 11, 11, 10, 2), 50.0, 50.0)])
    assert json.loads((published / "parity.json").read_text())["verdict"] == \
        "equal_for_emitted_rows"
    assert "20240101T100000" in (home / "reports" / "q_tmall_max_price.html").read_text()
    for name in storage.files(home):  # reports, records, audit, history: no secret
        if not name.endswith(".parquet"):
            assert SECRET_KEY.encode() not in (home / name).read_bytes(), name
    # nothing of the query on a local disk but the shipped code and GX's Data Docs
    assert sorted(p.name for p in (tmp_path / "local").iterdir()) == ["dist", "gx"]
