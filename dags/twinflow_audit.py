"""Audit DAGs, one per query config in ``dags/queries/*.json``: ``twinflow_audit_<query>``.

A query run proves what it published (its parity reads only the input its results can reach,
docs in README "Scheduled runs"). The audit proves the whole: every row the query's stream has
emitted up to its newest run against batch over all input retained by then. It catches what a
run's parity cannot: a row published by two runs, and (OVER and window aggregates by event
time) an on-time row or window that the watermark has passed and no run emitted. One task,
``audit`` (spark-submit), writes ``$TWINFLOW_HOME/runs/audit_<query>/<ts>/audit.json`` and
fails the DAG run on a difference. Schedule: the config's ``"audit_schedule"`` (default
``@daily``).

The audit only reads what the newest recorded run committed, so it may run while the query's
DAG runs.
"""

from __future__ import annotations

from pathlib import Path

from airflow.sdk import DAG

from jobs.dag_parts import dag_run_dir, ship_code, spark_step, twinflow_dag
from operators_lib.paths import queries_dir
from operators_lib.runs.query_config import QueryConfig


def build_audit_dag(config_path: Path) -> DAG:
    cfg = QueryConfig.read(config_path)
    run_dir = dag_run_dir("audit", cfg.name)
    with twinflow_dag(f"twinflow_audit_{cfg.name}", cfg.audit_schedule, cfg, __doc__,
                      ["twinflow", "maintenance"]) as dag:
        ship_code() >> spark_step("audit", "audit", config_path, run_dir, cfg)
    return dag


for _path in sorted(queries_dir().glob("*.json")):
    _dag = build_audit_dag(_path)
    globals()[_dag.dag_id] = _dag
