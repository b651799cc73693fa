"""Hotspot DAGs, one per query config in ``dags/queries/*.json`` with a ``"hotspot"`` section.

Each run of ``twinflow_hotspot_<query>``:

1. ``measure_skew`` (spark-submit): rows per TopN partition key over the query's recent input;
2. ``choose_split``: the documented rule (operators_lib/runs/hotspot.py) turns the skew into a split
   factor S; every decision is audited in ``$TWINFLOW_HOME/audit/<query>/`` (a file per
   record) and a changed S is written to ``$TWINFLOW_HOME/config/<query>.json`` (never into
   the DAG folder). The next ``twinflow_<query>`` run uses it: it rebuilds the TopN state for
   the new S and proves parity with batch, as every run does.

This DAG never touches the query's state, so it can run while the query's DAG runs.
"""

from __future__ import annotations

from pathlib import Path

from airflow.sdk import DAG, task

from jobs.dag_parts import dag_run_dir, ship_code, spark_step, twinflow_dag
from operators_lib.paths import queries_dir
from operators_lib.runs.query_config import QueryConfig


def build_hotspot_dag(config_path: Path) -> DAG:
    cfg = QueryConfig.read(config_path)
    run_dir = dag_run_dir("hotspot", cfg.name)
    with twinflow_dag(f"twinflow_hotspot_{cfg.name}", cfg.hotspot.schedule, cfg,
                      __doc__, ["twinflow", "maintenance"]) as dag:
        measure = spark_step("measure_skew", "measure-skew", config_path, run_dir, cfg)

        @task
        def choose_split(run: str) -> dict:
            from jobs.task_store import configured
            from operators_lib.io.storage import place
            from operators_lib.runs.hotspot import Skew, decide

            configured(config_path)
            return decide(config_path, Skew.read(place(run, "run") / "skew.json"))

        ship_code() >> measure >> choose_split(run_dir)
    return dag


for _path in sorted(queries_dir().glob("*.json")):
    if QueryConfig.read(_path).hotspot:
        _dag = build_hotspot_dag(_path)
        globals()[_dag.dag_id] = _dag
