"""twinflow on a Spark standalone cluster: a master and two one-core workers on the loopback
interface (tests/cluster.py), so executors are JVMs and Python workers of their own, started
by the workers, that import twinflow from the zip the driver ships
(operators_lib/engine/shipping.py).

One test (one cluster: every JVM counts on this 2-core machine): a corpus case in stream mode
gives Flink's result; then a query DAG's steps (stream, and batch for parity) are submitted to
the cluster (SparkSubmitOperator with ``--py-files``) and publish.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.caselib import CASES, Case, assert_final
from tests.cluster import StandaloneCluster, cluster_jvm_options
from tests.test_dags import SEED, _config, _latest, _run, _task_states

REPO = Path(__file__).resolve().parents[1]
# The slot pages of the changelog operators (a join feeding an aggregate; TopN keeps its pages
# the same way); state per key with event-time timers (OVER) runs in the DAG run below, as
# windows keep theirs. The other operators run the same runtimes, each covered locally; on this
# 2-core machine every cluster case costs half a minute.
# group/python_udf_keys: Python UDFs, their module on no executor's path (pickled by value).
CLUSTER_CASES = ["join/join_then_aggregate", "group/python_udf_keys"]


def test_corpus_cases_and_a_dag_run_on_a_standalone_cluster(airflow_env, tmp_path):
    with StandaloneCluster(tmp_path / "cluster") as master:
        out = tmp_path / "cases"
        proc = subprocess.run(
            [sys.executable, "-m", "tests.cluster_cases", "--master", master, "--out",
             str(out), *CLUSTER_CASES], capture_output=True, text=True, cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=900)
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
            assert_final(Case(CASES / case_id), out / case_id.replace("/", "__"),
                         "stream.csv", "batch_final.csv")

        airflow_env.setenv("AIRFLOW_CONN_SPARK_DEFAULT", master)
        config = _config(tmp_path, "tmall_max_price")
        cfg = json.loads(config.read_text())  # the executors' JVM options, as cluster_cases'
        cfg["spark_conf"]["spark.executor.extraJavaOptions"] = cluster_jvm_options()
        cfg["spark_conf"]["spark.sql.shuffle.partitions"] = "2"
        config.write_text(json.dumps(cfg))
        shutil.copy(SEED / "incoming" / "tmall_item" / "2017-11-11T10.csv",
                    tmp_path / "incoming")
        run = _run(airflow_env, config, 10)
        assert run.state == "success", _task_states(run)
    home = Path(airflow_env["TWINFLOW_HOME"])
    published = _latest(home, "q_tmall_max_price")
    # the watermark is 10:02 (1 minute behind 10:03): ITEM001 and ITEM002 are out
    assert (published / "stream.csv").read_text().splitlines()[1:] == [
        "ITEM001,Electronic,2017-11-11 10:01:00.000,20.0,20.0",
        "ITEM002,Electronic,2017-11-11 10:02:00.000,50.0,50.0"]
    assert json.loads((published / "parity.json").read_text())["verdict"] == \
        "equal_for_emitted_rows"
