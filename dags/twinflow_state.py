"""State lifecycle DAGs, one set per query config in ``dags/queries/*.json``.

- ``twinflow_checkpoints_<query>``: checkpoint rotation, after the query's runs (scheduled on
  its Asset ``twinflow_<query>``, or the config's ``checkpoints.schedule``):
  ``snapshot`` the state (operators_lib/state/snapshots.py) -> ``verify`` (spark-submit): resume the
  new snapshot in a scratch directory and compare its result with the live state's
  (runs/verify.py; a difference fails the run) -> ``prune`` to the newest
  ``checkpoints.keep`` (default 3) of the rotation's snapshots (those taken by hand stay).
  Pruning follows a verified snapshot only: one that does not restore never displaces the
  good ones.
- ``twinflow_rollback_<query>``: manual, with the snapshot's id as its param ``snapshot``
  (``twinflow state list`` shows them): makes that snapshot the query's state. It refuses while
  the query's DAG has a run queued or running (pause that DAG first); the state lock keeps any
  run out while it works. The next run stages again what arrived after the snapshot.
- ``twinflow_compact_<query>``: state TTL compaction (config ``compact_schedule``, default
  ``@daily``): ``compact`` (spark-submit) sweeps the state idle longer than the query's TTL
  (runs/compaction.py; keys, rows and bytes before and after go to the metrics history and the
  audit log ``$TWINFLOW_HOME/audit/<query>/``, a file per record; a sweep that changed the
  result fails it)
  -> ``compacted`` (skips the rest when the query sets no TTL or has not run) -> ``audit``:
  everything the stream emitted against batch.

The tasks that change the state hold its lock: a query run meeting one fails (exit 2) and is
retried. The DAGs only wire tasks; the work is in ``operators_lib/``.
"""

from __future__ import annotations

import json
from pathlib import Path

from airflow.sdk import DAG, Asset, Param, get_current_context, task

from jobs.dag_parts import dag_run_dir, ship_code, spark_step, twinflow_dag
from operators_lib.paths import queries_dir
from operators_lib.runs.query_config import QueryConfig


def build_checkpoints_dag(config_path: Path) -> DAG:
    cfg = QueryConfig.read(config_path)
    name, rotation = cfg.name, cfg.checkpoints
    run_dir = dag_run_dir("checkpoints", name)
    schedule = rotation.schedule or [Asset(name=f"twinflow_{name}")]
    with twinflow_dag(f"twinflow_checkpoints_{name}", schedule, cfg, __doc__,
                      ["twinflow", "maintenance"]) as dag:
        @task
        def snapshot() -> dict:
            from jobs.task_store import configured
            from operators_lib.paths import state_dir
            from operators_lib.state import snapshots

            configured(config_path)
            return snapshots.snapshot(state_dir(name), origin=snapshots.ROTATION)

        @task
        def prune() -> list[str]:
            from jobs.task_store import configured
            from operators_lib.paths import state_dir
            from operators_lib.state import snapshots

            configured(config_path)
            return snapshots.prune(state_dir(name), rotation.keep, snapshots.ROTATION)

        taken = snapshot()
        verify = spark_step("verify", "verify", config_path, run_dir, cfg, (
            "--snapshot", "{{ ti.xcom_pull(task_ids='snapshot')['id'] }}"))
        [taken, ship_code()] >> verify >> prune()
    return dag


def build_rollback_dag(config_path: Path) -> DAG:
    cfg = QueryConfig.read(config_path)
    name = cfg.name
    # A manual action, taken once: no retries.
    with twinflow_dag(f"twinflow_rollback_{name}", None, cfg, __doc__,
                      ["twinflow", "maintenance"], retries=0) as dag:
        dag.params["snapshot"] = Param(type="string", minLength=1,
                                       description="the snapshot's id (twinflow state list)")

        @task
        def rollback() -> dict:
            from jobs.task_store import configured
            from operators_lib.errors import InputError
            from operators_lib.paths import state_dir
            from operators_lib.state import snapshots

            configured(config_path)
            context = get_current_context()
            busy = context["ti"].get_dr_count(dag_id=f"twinflow_{name}",
                                              states=["queued", "running"])
            if busy:
                raise InputError(f"twinflow_{name} has {busy} run(s) queued or running: pause "
                                 "it and let them end, then roll back")
            return snapshots.rollback(state_dir(name), context["params"]["snapshot"])

        rollback()
    return dag


def build_compact_dag(config_path: Path) -> DAG:
    cfg = QueryConfig.read(config_path)
    run_dir = dag_run_dir("compact", cfg.name)
    with twinflow_dag(f"twinflow_compact_{cfg.name}", cfg.compact_schedule, cfg,
                      __doc__, ["twinflow", "maintenance"]) as dag:
        @task.short_circuit
        def compacted(run: str) -> bool:
            """Audit only what a sweep changed (a query without TTL, or that has not run yet,
            is left as it was)."""
            from jobs.task_store import configured
            from operators_lib.io.storage import place

            configured(config_path)
            return json.loads((place(run, "run") / "compact.json").read_text())["compacted"]

        ship_code() >> spark_step("compact", "compact", config_path, run_dir, cfg) >> \
            compacted(run_dir) >> spark_step("audit", "audit", config_path, f"{run_dir}/audit",
                                             cfg)
    return dag


for _path in sorted(queries_dir().glob("*.json")):
    for _build in (build_checkpoints_dag, build_rollback_dag, build_compact_dag):
        _dag = _build(_path)
        globals()[_dag.dag_id] = _dag
