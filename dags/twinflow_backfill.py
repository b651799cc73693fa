"""Backfill DAGs, one per query config in ``dags/queries/*.json``: ``twinflow_backfill_<query>``.

Triggered by hand with the params ``start`` and ``end``, two data intervals (run keys, as
``ts_nodash``: ``20240101T110000``): ``backfill`` (spark-submit) recomputes in batch mode, from
the retained input, what each recorded interval in that range published
(operators_lib/runs/backfill.py) and validates each with the query's Great Expectations suite
in the same Spark application (runs/gating.py); ``gate_and_publish`` takes each gate's verdict
and publishes the interval as the query's runs do (``published/<query>/<interval>/``,
replacing that interval's version; ``LATEST`` stays on the newest interval). A failed gate
stops there: the intervals before it are published, it and those after are not.

The backfill only reads the query's state, so it may run while the query's DAG runs.
"""

from __future__ import annotations

from pathlib import Path

from airflow.sdk import DAG, Param, task

from jobs.dag_parts import dag_run_dir, ship_code, spark_step, twinflow_dag
from operators_lib.paths import queries_dir
from operators_lib.runs.query_config import QueryConfig


def build_backfill_dag(config_path: Path) -> DAG:
    cfg = QueryConfig.read(config_path)
    run_dir = dag_run_dir("backfill", cfg.name)
    with twinflow_dag(f"twinflow_backfill_{cfg.name}", None, cfg, __doc__,
                      ["twinflow", "maintenance"]) as dag:
        for param in ("start", "end"):
            dag.params[param] = Param(type="string", pattern=r"^\d{8}T\d{6}",
                                      description=f"the {param} interval (ts_nodash)")
        backfill = spark_step("backfill", "backfill", config_path, run_dir, cfg, (
            "--start", "{{ params.start }}", "--end", "{{ params.end }}"))

        @task
        def gate_and_publish(run: str) -> dict[str, str]:
            from jobs.gates import publish, validate
            from jobs.task_store import configured
            from operators_lib.io.storage import place

            query = configured(config_path)
            published = {}
            for interval in sorted((p for p in place(run, "run").iterdir() if p.is_dir()),
                                   key=str):
                validate(query, str(interval))
                published[interval.name] = str(publish(query, str(interval), interval.name))
            return published

        ship_code() >> backfill >> gate_and_publish(run_dir)
    return dag


for _path in sorted(queries_dir().glob("*.json")):
    _dag = build_backfill_dag(_path)
    globals()[_dag.dag_id] = _dag
