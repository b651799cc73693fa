"""twinflow query DAGs, one per config in ``dags/queries/*.json`` (or $TWINFLOW_QUERIES).

Each run of ``twinflow_<query>``:

1. ``stream_and_parity`` (one spark-submit, so one Spark application per run): stages the
   input files that arrived since the last run (all or nothing: a bad header, or more
   malformed rows than the config's ``max_rejected_rows``, default 0, fails the run before
   anything is staged) and runs the streaming job from the query's checkpoint with
   ``availableNow``; then recomputes the same input in batch and proves the stream's emitted
   rows equal it (other rows: late, or pending behind the watermark); then validates the
   run's rows, as a Spark DataFrame on the executors, with the checkpoint of the query's
   Great Expectations suite (the file context ``expectations/gx/``, operators_lib/ops/
   quality.py; its action updates the Data Docs under ``$TWINFLOW_HOME/gx/``) plus run-time
   row-count rules, into ``validation.json`` (runs/gating.py). Its log says which part
   failed: exit 1 is a parity failure (``parity.json``), 2 bad input, 3 damaged state or
   engine;
2. ``validate``: the gate's verdict: a failed critical expectation fails the run (no data is
   loaded on the Airflow worker);
3. ``publish``: only then, an atomic move into ``published/<query>/<interval>/`` + ``LATEST``,
   and an event of the query's Asset (``twinflow_<query>``) with the run's numbers as its
   extra (jobs/gates.published_numbers): downstream DAGs can be scheduled on it;
4. ``report``: the run's numbers as Airflow metrics (StatsD or OpenTelemetry, as Airflow's
   ``[metrics]`` says) and the query's ops report re-rendered, shown in the UI by the twinflow
   plugin (the DAG's "twinflow report" tab; jobs/ops_reports.py). Its result (XCom) is the
   run's numbers and the report's path.

Airflow's own backfill (``airflow backfill create``) is refused for these DAGs: a run stages what
arrived since the last one, so a run for a past interval would stream new input under an old
key. Past intervals are recomputed by ``twinflow_backfill_<query>`` (dags/twinflow_backfill.py).

Runs are keyed by the data interval (``ts_nodash``; a run without one, as a manual run in
Airflow 3, by when it was due: jobs/dag_parts.run_key): a retry rewrites its own run directory.
The DAG only wires tasks; the work is in ``jobs/`` and ``operators_lib/``.
"""

from __future__ import annotations

from pathlib import Path

from airflow.sdk import DAG, Asset, get_current_context, task

from jobs.dag_parts import RUN_KEY, dag_run_dir, ship_code, spark_step, twinflow_dag
from jobs.task_store import configured
from operators_lib.paths import queries_dir
from operators_lib.runs.query_config import QueryConfig


def build_dag(config_path: Path) -> DAG:
    cfg = QueryConfig.read(config_path)
    run_dir = dag_run_dir("", cfg.name)
    published = Asset(name=f"twinflow_{cfg.name}")
    with twinflow_dag(f"twinflow_{cfg.name}", cfg.schedule, cfg, __doc__, ["twinflow"],
                      run_types=["scheduled", "manual"], deadline=True,
                      description=f"{cfg.name}: stream, parity, gate, publish (recompute "
                                  f"past intervals with twinflow_backfill_{cfg.name}, not "
                                  "airflow backfill)") as dag:
        increment = spark_step("stream_and_parity", "increment", config_path, run_dir, cfg)

        @task(retries=0)
        def validate(run: str) -> dict:
            from jobs.gates import validate as gate

            return gate(configured(config_path), run)

        @task(outlets=[published])
        def publish(run: str, run_key: str, summary: dict) -> str:
            from jobs.gates import publish as do_publish
            from jobs.gates import published_numbers

            target = do_publish(configured(config_path), run, run_key)
            get_current_context()["outlet_events"][published].extra = published_numbers(
                target, run_key)
            return str(target)

        @task(retries=0)
        def report(run_key: str, published: str) -> dict:
            from jobs.ops_reports import after_run

            return after_run(configured(config_path).name, run_key)

        summary = validate(run_dir)
        ship_code() >> increment >> summary
        report(RUN_KEY, publish(run_dir, RUN_KEY, summary))
    return dag


for _path in sorted(queries_dir().glob("*.json")):
    _dag = build_dag(_path)
    globals()[_dag.dag_id] = _dag
