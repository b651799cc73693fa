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

from pathlib import Path

from operators_lib.ops import history
from operators_lib.ops.report import render
from operators_lib.paths import reports_dir, state_dir

# A run's numbers (ops/history.py): rows are per run, state and checkpoint after it.
GAUGES = ("input_rows", "rejected_rows", "late_rows", "micro_batches", "stream_seconds",
          "lag_s", "state_rows", "state_bytes", "checkpoint_bytes")


def run_gauges(query: str, record: dict) -> dict[str, float]:
    """The gauges of one run's history record (numbers it did not record are left out)."""
    return {f"twinflow.{query}.{name}": record[name] for name in GAUGES
            if record.get(name) is not None}


def after_run(query: str, run_key: str) -> dict:
    """A query DAG's last step: the run's gauges sent, the query's report rendered. Returns
    what the task shows as its result: the run's numbers and the report's path."""
    from airflow.sdk.observability import stats

    record = history.run_record(state_dir(query), run_key)
    gauges = run_gauges(query, record or {})
    for name, value in gauges.items():
        stats.gauge(name, value, tags={"query": query})
    page = render_report(query)
    return {"run": run_key, "report": str(page), "parity": (record or {}).get("parity"),
            **{name.rsplit(".", 1)[1]: value for name, value in gauges.items()}}


def render_report(query: str) -> Path:
    """``$TWINFLOW_HOME/reports/<query>.html`` from the query's history."""
    page = reports_dir() / f"{query}.html"
    tmp = page.with_name(f".{page.name}.tmp")  # the UI never serves half a page
    render(state_dir(query), tmp)
    tmp.replace(page)
    return page


def render_all(queries: list[str]) -> dict[str, str]:
    """Every query's report (the daily reports DAG): query -> page."""
    return {q: str(render_report(q)) for q in queries}


def query_of(dag_id: str, queries: set[str]) -> str | None:
    """The query a twinflow DAG belongs to: ``twinflow_<q>`` or ``twinflow_<kind>_<q>`` (the
    DAG's own query first where both would match)."""
    rest = dag_id.removeprefix("twinflow_")
    if rest == dag_id:
        return None
    kind_and_query = rest.split("_", 1)
    return next((q for q in (rest, kind_and_query[-1]) if q in queries), None)
