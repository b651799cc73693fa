"""What the twinflow DAGs share: their settings, and spark-submit tasks that each run one step
of jobs/twinflow_job.py."""

from __future__ import annotations

import sys
from datetime import datetime, timedelta
from pathlib import Path

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import DAG

from operators_lib.paths import home
from operators_lib.spark import DRIVER_JAVA_OPTIONS

JOB = str(Path(__file__).resolve().parent / "twinflow_job.py")


def spark_step(task_id: str, step: str, config_path: Path, run_dir: str, cfg: dict
               ) -> SparkSubmitOperator:
    """``spark-submit jobs/twinflow_job.py <step> --config .. --run-dir ..`` on the query's
    Spark connection (default ``spark_default``). Driver JVM options only count on this command
    line (the JVM starts before the job's code): the driver exits on OutOfMemoryError instead of
    hanging (operators_lib/spark.py). The query config's ``"spark_conf"`` comes last and wins."""
    return SparkSubmitOperator(
        task_id=task_id, application=JOB, name=f"twinflow-{cfg['name']}-{step}",
        conn_id=cfg.get("spark_conn_id", "spark_default"),
        application_args=[step, "--config", str(config_path), "--run-dir", run_dir],
        env_vars={"PYSPARK_PYTHON": sys.executable, "TWINFLOW_HOME": str(home())},
        # Driver JVM options (exit on out-of-memory, Spark's warnings only in the task log) go
        # on the spark-submit command line: the JVM starts before the job's Python code. A
        # query's "spark_conf" comes last and wins.
        conf={"spark.sql.session.timeZone": "UTC",
              "spark.driver.defaultJavaOptions": DRIVER_JAVA_OPTIONS,
              **cfg.get("spark_conf", {})})


def twinflow_dag(dag_id: str, schedule: str | None, cfg: dict, doc: str, tags: list[str]
                 ) -> DAG:
    """A DAG of one query: no catch-up, one run at a time (runs share the query's state)."""
    return DAG(dag_id=dag_id, schedule=schedule, start_date=datetime(2024, 1, 1), catchup=False,
               max_active_runs=1, default_args={"retries": cfg.get("retries", 1),
                                                "retry_delay": timedelta(minutes=1)},
               doc_md=doc, tags=tags)
