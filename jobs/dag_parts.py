"""What the twinflow DAGs share: their settings, and spark-submit tasks that each run one step
of jobs/twinflow_job.py."""

from __future__ import annotations

import importlib
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import DAG, DeadlineAlert, DeadlineReference, SyncCallback, task

from operators_lib.engine.spark import driver_java_options, store_classpath
from operators_lib.errors import InputError
from operators_lib.paths import gx_root, home, local_dir
from operators_lib.runs.query_config import QueryConfig

JOB = str(Path(__file__).resolve().parent / "twinflow_job.py")
# The zip of twinflow's code that ``ship_code`` wrote (operators_lib/engine/shipping.py).
CODE = "{{ ti.xcom_pull(task_ids='ship_code') }}"
# A run's key: its directory (runs/<query>/<key>/) and its published interval (``run_key``).
RUN_KEY = "{{ run_key(dag_run) }}"


def dag_run_dir(kind: str, query: str) -> str:
    """A DAG run's directory (templated): ``$TWINFLOW_HOME/runs/<kind>_<query>/<run key>``, or
    ``runs/<query>/<run key>`` for the query's own runs (kind "")."""
    return f"{home() / 'runs' / (f'{kind}_{query}' if kind else query)}/{RUN_KEY}"


def run_key(dag_run: Any) -> str:
    """A DAG run's key: its logical date as ``ts_nodash`` (a scheduled run: its data
    interval; a retry keeps it). An Asset-triggered run, and in Airflow 3 a manual one, has no
    logical date (``ts_nodash`` is then undefined or "None"): such a run is keyed by the time
    it was due, to the microsecond, so that two of them never share a directory. Keys of
    either kind sort in time order."""
    if dag_run.logical_date is not None:
        return dag_run.logical_date.strftime("%Y%m%dT%H%M%S")
    return dag_run.run_after.strftime("%Y%m%dT%H%M%S%f")


@task
def ship_code() -> str:
    """The code executors import, as a zip (once per version: paths.local_dir), so that the
    spark-submit steps run on a cluster whose machines do not have twinflow."""
    from operators_lib.engine.shipping import code_archive

    return str(code_archive(local_dir() / "dist"))


class SparkStep(SparkSubmitOperator):
    """spark-submit with the query's store credentials in its environment, looked up when it
    runs (jobs/task_store.py)."""

    def __init__(self, *, cfg: QueryConfig, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cfg = cfg

    def execute(self, context: Any) -> None:
        from jobs.task_store import store_environment

        self.env_vars = {**(self.env_vars or {}), **store_environment(self.cfg)}
        super().execute(context)


def spark_step(task_id: str, step: str, config_path: Path, run_dir: str, cfg: QueryConfig,
               extra: tuple[str, ...] = ()) -> SparkStep:
    """``spark-submit jobs/twinflow_job.py <step> --config .. --run-dir ..`` on the query's
    Spark connection (default ``spark_default``). Driver JVM options only count on this command
    line (the JVM starts before the job's code): the driver exits on OutOfMemoryError instead of
    hanging (operators_lib/engine/spark.py). The query config's ``"spark_conf"`` comes last and
    wins.
    The code goes along as ``--py-files`` (``ship_code`` must run first). ``extra``: more
    arguments of the step (templated)."""
    return SparkStep(
        cfg=cfg, task_id=task_id, application=JOB, name=f"twinflow-{cfg.name}-{step}",
        conn_id=cfg.spark_conn_id, py_files=CODE,
        application_args=[step, "--config", str(config_path), "--run-dir", run_dir, *extra],
        execution_timeout=timedelta(minutes=cfg.step_timeout_minutes), pool=cfg.spark_pool,
        # (the driver imports the shipped code: no checkout's defaults there)
        env_vars={"PYSPARK_PYTHON": sys.executable, "TWINFLOW_HOME": str(home()),
                  "TWINFLOW_GX_ROOT": str(gx_root())},
        # Driver JVM options (exit on out-of-memory, Spark's warnings only in the task log) go
        # on the spark-submit command line: the JVM starts before the job's Python code. A
        # query's "spark_conf" comes last and wins.
        conf={"spark.sql.session.timeZone": "UTC",
              "spark.driver.defaultJavaOptions": driver_java_options(
                  cfg.spark_conf.get("spark.driver.extraJavaOptions", "")),
              **store_classpath(), **cfg.spark_conf})


def twinflow_dag(dag_id: str, schedule: str | list | None, cfg: QueryConfig, doc: str,
                 tags: list[str], retries: int | None = None,
                 run_types: list[str] | None = None, description: str | None = None,
                 deadline: bool = False) -> DAG:
    """A DAG of one query: no catch-up, one run at a time (runs share the query's state);
    ``retries``: of each task (the config's unless given: 0 where a retry would not help);
    the config's ``on_failure`` called when a task fails; ``run_types``: the only kinds of
    runs Airflow may make of it (Airflow's ``allowed_run_types``; None: any); ``deadline``:
    the config's ``deadline_minutes`` applies to its runs. Its templates key runs with
    ``RUN_KEY``."""
    default_args: dict[str, Any] = {
        "retries": cfg.retries if retries is None else retries,
        "retry_delay": timedelta(minutes=cfg.retry_delay_minutes)}
    if cfg.on_failure:
        default_args["on_failure_callback"] = _callback(cfg.on_failure, cfg.name)
    return DAG(dag_id=dag_id, schedule=schedule, start_date=datetime(2024, 1, 1), catchup=False,
               max_active_runs=1, default_args=default_args, doc_md=doc, tags=tags,
               user_defined_macros={"run_key": run_key}, allowed_run_types=run_types,
               description=description,
               deadline=_deadline(cfg) if deadline and cfg.deadline_minutes else None)


def _deadline(cfg: QueryConfig) -> DeadlineAlert:
    """Airflow's deadline of a run: ``deadline_minutes`` after it was queued, then the
    config's ``on_deadline`` (else its ``on_failure``) is called on an executor."""
    spec = cfg.on_deadline or cfg.on_failure
    if not spec:
        raise InputError(f"{cfg.name}: deadline_minutes needs on_deadline or on_failure (whom "
                         "to tell)")
    if cfg.on_deadline:  # (on_failure: imported by twinflow_dag already)
        _callback(cfg.on_deadline, cfg.name, "on_deadline")
    return DeadlineAlert(reference=DeadlineReference.DAGRUN_QUEUED_AT,
                         interval=timedelta(minutes=cfg.deadline_minutes),
                         callback=SyncCallback(spec.replace(":", ".")))


def _callback(spec: str, query: str, key: str = "on_failure") -> Any:
    """``module:attribute`` of the config's ``key``, imported (an InputError naming the query's
    config key when it is not there)."""
    module, _, attribute = spec.partition(":")
    try:
        return getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError, ValueError) as e:
        raise InputError(f"{query}: {key} {spec!r} is not module:attribute of an "
                         f"importable callable or Notifier ({e})") from None
