"""The ops steps the DAGs run on an Airflow worker (no Spark): a run's numbers as Airflow
metrics, and the queries' ops reports (operators_lib/ops/report.py) under
``$TWINFLOW_HOME/reports/``, which the twinflow Airflow plugin shows in the UI
(jobs/airflow_plugin.py).

Metrics go through Airflow's own metrics client, so they go where Airflow's go: StatsD or
OpenTelemetry as its ``[metrics]`` section says (``statsd_on``, ``otel_on``, their hosts and
prefix), nowhere if neither is on. Gauges, per run of a query ``<q>``:
``twinflow.<q>.<number>`` for each of ``GAUGES`` (tagged ``query=<q>`` where the backend
takes tags)."""

from __future__ import annotations

import logging
from pathlib import Path

from operators_lib.io.storage import Place
from operators_lib.ops import history
from operators_lib.ops.report import render
from operators_lib.paths import reports_dir, state_dir

log = logging.getLogger(__name__)

# A run's numbers (ops/history.py): rows are per run, state and checkpoint after it.
GAUGES = ("input_rows", "rejected_rows", "late_rows", "micro_batches", "stream_seconds",
          "lag_s", "state_rows", "state_bytes", "checkpoint_bytes")


def run_gauges(query: str, record: dict) -> dict[str, float]:
    """The gauges of one run's history record (numbers it did not record are left out)."""
    return {f"twinflow.{query}.{name}": record[name] for name in GAUGES
            if record.get(name) is not None}


def after_run(query: str, run_key: str) -> dict:
    """A query DAG's last step: the run's gauges sent, the query's report rendered. Returns
    what the task shows as its result: the run's numbers and the report's path. A report
    that cannot be rendered is logged, not a failure: the run is published already."""
    from airflow.sdk.observability import stats

    record = history.run_record(state_dir(query), run_key)
    gauges = run_gauges(query, record or {})
    for name, value in gauges.items():
        stats.gauge(name, value, tags={"query": query})
    try:
        page = str(render_report(query))
    except Exception as e:  # noqa: BLE001 (any: the run's outcome stands)
        log.warning("%s: the ops report was not rendered: %s", query, e)
        page = None
    return {"run": run_key, "report": page, "parity": (record or {}).get("parity"),
            **{name.rsplit(".", 1)[1]: value for name, value in gauges.items()}}


def render_report(query: str) -> Place:
    """``$TWINFLOW_HOME/reports/<query>.html`` from the query's history (replaced whole:
    report.render)."""
    page = reports_dir() / f"{query}.html"
    render(state_dir(query), page)
    return page


def render_all(configs: list[Path]) -> dict[str, str]:
    """Every query's report (the daily reports DAG), each reached as its own tasks reach it
    (jobs/task_store.py): query -> page. One that fails does not stop the others; then the
    task fails, naming them."""
    from jobs.task_store import configured

    pages, failed = {}, {}
    for path in configs:
        q = path.stem
        try:
            q = configured(path).name
            pages[q] = str(render_report(q))
        except Exception as e:  # noqa: BLE001 (reported below, with the query)
            failed[q] = f"{type(e).__name__}: {e}"
    if failed:
        raise RuntimeError(f"ops reports not rendered: {failed} (rendered: {sorted(pages)})")
    return pages


# The DAGs of a query ``q`` besides its own (``twinflow_<q>``): ``twinflow_<kind>_<q>``.
DAG_KINDS = ("audit", "backfill", "checkpoints", "compact", "hotspot", "rollback")


def query_of(dag_id: str, queries: set[str]) -> str | None:
    """The query of ``queries`` a twinflow DAG belongs to: ``twinflow_<q>`` or
    ``twinflow_<kind>_<q>`` for a kind of ``DAG_KINDS``; None for any other DAG."""
    rest = dag_id.removeprefix("twinflow_")
    if rest == dag_id:
        return None
    if rest in queries:
        return rest
    return next((rest.removeprefix(f"{kind}_") for kind in DAG_KINDS
                 if rest.startswith(f"{kind}_") and rest.removeprefix(f"{kind}_") in queries),
                None)
