"""twinflow query DAGs, one per config in ``dags/queries/*.json`` (or $TWINFLOW_QUERIES).

Each run of ``twinflow_<query>``:

1. ``stream_increment`` (spark-submit): stages the input files that arrived since the last run
   and runs the streaming job from the query's checkpoint with ``availableNow``;
2. ``batch_parity`` (spark-submit): recomputes the same input in batch and proves the stream's
   emitted rows equal it (other rows: late, or pending behind the watermark);
3. ``validate``: the query's Great Expectations suite (``expectations/<suite>.json``) plus
   run-time row-count rules; a failure fails the run;
4. ``publish``: only then, an atomic move into ``published/<query>/<interval>/`` + ``LATEST``.

Runs are keyed by the data interval (``ts_nodash``): a retry rewrites its own run directory.
The DAG only wires tasks; the work is in ``jobs/`` and ``operators_lib/``.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timedelta
from pathlib import Path

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import DAG, task

from operators_lib.paths import home, queries_dir

JOB = str(Path(__file__).resolve().parents[1] / "jobs" / "twinflow_job.py")
RUN_KEY = "{{ ts_nodash }}"


def build_dag(config_path: Path) -> DAG:
    cfg = json.loads(config_path.read_text())
    name = cfg["name"]
    run_dir = f"{home() / 'runs' / name}/{RUN_KEY}"
    env = {"PYSPARK_PYTHON": sys.executable, "TWINFLOW_HOME": str(home())}
    spark_args = {"conn_id": cfg.get("spark_conn_id", "spark_default"), "application": JOB,
                  "env_vars": env, "name": f"twinflow-{name}",
                  "conf": {"spark.sql.session.timeZone": "UTC"}}
    with DAG(
        dag_id=f"twinflow_{name}",
        schedule=cfg.get("schedule"),
        start_date=datetime(2024, 1, 1),
        catchup=False,
        max_active_runs=1,  # runs share one checkpoint: never two at once
        default_args={"retries": cfg.get("retries", 1), "retry_delay": timedelta(minutes=1)},
        doc_md=__doc__,
        tags=["twinflow"],
    ) as dag:
        stream = SparkSubmitOperator(
            task_id="stream_increment",
            application_args=["stream-increment", "--config", str(config_path), "--run-dir",
                              run_dir], **spark_args)
        batch = SparkSubmitOperator(
            task_id="batch_parity",
            application_args=["batch-parity", "--config", str(config_path), "--run-dir",
                              run_dir], **spark_args)

        @task(retries=0)
        def validate(run: str) -> dict:
            from jobs.gates import validate as gate
            from operators_lib.incremental import QueryConfig

            return gate(QueryConfig.load(config_path), Path(run))

        @task
        def publish(run: str, run_key: str, summary: dict) -> str:
            from jobs.gates import publish as do_publish
            from operators_lib.incremental import QueryConfig

            return str(do_publish(QueryConfig.load(config_path), Path(run), run_key))

        summary = validate(run_dir)
        stream >> batch >> summary
        publish(run_dir, RUN_KEY, summary)
    return dag


for _path in sorted(queries_dir().glob("*.json")):
    _dag = build_dag(_path)
    globals()[_dag.dag_id] = _dag
