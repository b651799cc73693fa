"""twinflow deployed as a user deploys it (its wheel pip-installed into an Airflow environment,
its DAG file written by ``twinflow dags install``: tests/installed.py), and the query and state
lifecycle DAGs under that real Airflow (tests/airflow_server.py: PostgreSQL, the scheduler,
the DAG processor and the API server, the LocalExecutor), real spark-submit jobs, on
one query's state (the shop's LEFT JOIN + GROUP BY, with a state TTL): the query DAG's run the
scheduler makes for its latest tick (its first try hangs, is killed at its timeout and
retried); the checkpoint rotation its Asset event triggers; a backfill and a rollback
triggered by hand without a logical date (Airflow 3's manual runs); the TTL compaction the
scheduler makes for its latest tick; Airflow's own backfill of the query DAG, refused; the
run's numbers sent to Airflow's StatsD and the query's ops report in the UI (the twinflow
plugin)."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from operators_lib.ops import history
from operators_lib.state import lifecycle, snapshots
from operators_lib.stream.runner import last_commit
from tests import installed
from tests.airflow_server import RealAirflow, StatsD
from tests.caselib import parquet_result, typed
from tests.cluster import INTERPRETED
from tests.test_dags import _latest

REPO = Path(__file__).resolve().parents[1]
SHOP = REPO / "examples" / "shop"
# Flink's result of the query over the 10h files (the corpus case of the same SQL and input).
FIRST_HOUR = REPO / "tests" / "cases" / "join" / "shop_revenue_first_hour" / "expected" / \
    "stream_final.csv"


# A Python UDF (the identity) that hangs the first time it is called: the query run's first
# try hangs in its stream's micro-batch until the step's execution_timeout kills it.
HANG = """
import os, time
from pyflink.table import DataTypes
from pyflink.table.udf import udf

@udf(result_type=DataTypes.BIGINT())
def hang_once(x):
    try:
        os.remove({marker!r})
    except FileNotFoundError:
        return x
    time.sleep(300)
    return x
"""


# The query's on_deadline: a run not done a minute after it was queued (the hung try above)
# is reported; Airflow calls it on an executor with the run's context.
ALERTS = """
import json, os
from pathlib import Path

def late(context):
    Path(os.environ["TWINFLOW_HOME"], "late.json").write_text(json.dumps(
        {"context": sorted(context), "dag_run": str(context.get("dag_run"))}))
"""


def _config(tmp: Path) -> Path:
    (tmp / "ttl.sql").write_text("SET 'table.exec.state.ttl' = '1 h';\n"
                                 "CREATE TEMPORARY FUNCTION hang_once AS 'hang.hang_once' "
                                 "LANGUAGE PYTHON;\n")
    (tmp / "hang.py").write_text(HANG.format(marker=str(tmp / "hang")))
    (tmp / "hang").touch()
    (tmp / "query.sql").write_text((SHOP / "revenue_by_region.sql").read_text().replace(
        "COUNT(o.order_id)", "COUNT(hang_once(o.order_id))"))
    cfg = json.loads((REPO / "dags" / "queries" / "revenue_by_region.json").read_text())
    cfg.update(name="q_rev", sql=[str(SHOP / "shop.sql"), str(tmp / "ttl.sql"),
                                  str(tmp / "query.sql")],
               inputs={t: str(tmp / "incoming" / t) for t in ("customers", "orders")},
               # a step killed after 3 minutes is tried again at once (the retry takes about
               # 2 minutes when the suite loads both cores: 2 was too tight for it)
               retries=1, retry_delay_minutes=0, step_timeout_minutes=3,
               deadline_minutes=1, on_deadline="alerts:late",
               rows_per_batch=100, spark_conf=INTERPRETED,
               checkpoints={"keep": 1}, spark_pool="twinflow_spark",
               # the scheduler's run for the latest tick at once, and no next tick while the
               # test runs (an hourly one crossing the hour queued a run: the rollback refused)
               schedule="@yearly", compact_schedule="@yearly")
    for t in cfg["inputs"]:
        (tmp / "incoming" / t).mkdir(parents=True)
    path = tmp / "queries" / "q_rev.json"
    path.parent.mkdir()
    path.write_text(json.dumps(cfg))
    return path


def _arrive(tmp: Path, hour: int) -> None:
    for t in ("customers", "orders"):
        src = SHOP / "incoming" / t / f"2024-01-01T{hour}.csv"
        if src.exists():
            shutil.copy(src, tmp / "incoming" / t)


def _ended(airflow: RealAirflow, dag_id: str, run_id: str | None = None) -> dict:
    """The run once ended; its task states in the failure message."""
    run = airflow.wait_for_run(dag_id, run_id, timeout=480)  # a hung try: 3 min + its retry
    assert run["state"] == "success", (dag_id, airflow.task_states(dag_id, run["dag_run_id"]),
                                       airflow.dir)
    return run


def _appears(path: Path, timeout: float = 60) -> Path:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} did not appear in {timeout} s"
        time.sleep(1)
    return path


def _key(directory: Path) -> str:
    (run,) = [p.name for p in directory.iterdir()]
    return run


@pytest.fixture
def statsd():
    with StatsD("airflow.twinflow.") as server:
        yield server


@pytest.fixture
def airflow(airflow_env, tmp_path, statsd):
    """A real Airflow in a virtualenv that had Airflow and its providers and into which the
    twinflow wheel was installed (tests/installed.py); its DAGs folder holds the DAG file
    ``twinflow dags install`` writes; Airflow sends its metrics to ``statsd``."""
    config = _config(tmp_path)
    (tmp_path / "callbacks").mkdir()
    (tmp_path / "callbacks" / "alerts.py").write_text(ALERTS)
    python = installed.install(tmp_path / "deployment")
    dags = tmp_path / "dags"
    dags.mkdir()
    subprocess.run([python.parent / "twinflow", "dags", "install", dags], check=True,
                   capture_output=True)
    env = {k: v for k, v in airflow_env.items() if not k.startswith("AIRFLOW")}
    env |= {"TWINFLOW_QUERIES": str(config.parent), "TWINFLOW_GX_ROOT": str(REPO / "expectations"),
            "PYTHONPATH": str(tmp_path / "callbacks"),
            "AIRFLOW__METRICS__STATSD_ON": "True", "AIRFLOW__METRICS__STATSD_HOST": "127.0.0.1",
            "AIRFLOW__METRICS__STATSD_PORT": str(statsd.port),
            "AIRFLOW_CONN_SPARK_DEFAULT": airflow_env["AIRFLOW_CONN_SPARK_DEFAULT"]}
    # What a DAG file resolves when parsed (TWINFLOW_HOME, the Python, twinflow's paths) is
    # the worker's: Airflow 3's task runner parses the DAG file again where the task runs.
    # The DAG processor here has another TWINFLOW_HOME, in which nothing may land.
    with RealAirflow(tmp_path / "airflow", env, {"TWINFLOW_HOME": str(
            tmp_path / "dag_processor_home")}, python=str(python), dags=dags) as server:
        server.pool("twinflow_spark", 1)  # the spark-submit steps' (a missing one: never run)
        yield server


def _installed_as_a_user_installs_it(airflow: RealAirflow) -> None:
    """pip's view of the Airflow environment is clean, and not one of pyspark's files was
    overwritten (the Spark provider 6.x's pyspark-client would: pyproject.toml)."""
    python = Path(airflow.python)
    check = subprocess.run([python, "-m", "pip", "check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout
    assert installed.changed_files(python, "pyspark") == []
    version = subprocess.run([python.parent / "twinflow", "--version"], capture_output=True,
                             text=True, check=True).stdout
    assert version.startswith("twinflow 0.1.0 (pyspark 4.3.0, apache-airflow 3.3.2")
    # the DAGs come from the installed package, not from this checkout
    site = subprocess.run([python, "-c", "import twinflow_dags.twinflow_queries as m; "
                           "print(m.__file__)"], capture_output=True, text=True).stdout
    assert "site-packages" in site and str(REPO) not in site


def _ops_report_and_metrics(airflow: RealAirflow, statsd: StatsD, key: str) -> None:
    """The run's last task sent its numbers to Airflow's StatsD and rendered the query's ops
    report, which the twinflow plugin serves on every DAG page of the query."""
    assert "airflow.twinflow.q_rev.input_rows:8|g" in statsd.lines, statsd.lines
    assert any(line.startswith("airflow.twinflow.q_rev.state_rows:") for line in statsd.lines)
    (plugin,) = [p for p in airflow._get("/api/v2/plugins")["plugins"]
                 if p["name"] == "twinflow"]
    assert {v["destination"] for v in plugin["external_views"]} == {"dag", "nav"}
    for dag_id in ("twinflow_q_rev", "twinflow_checkpoints_q_rev"):
        status, page = airflow.page(f"/twinflow/reports/{dag_id}")
        assert status == 200 and "twinflow: run history" in page and key in page, page[:300]
    status, page = airflow.page("/twinflow/reports/")
    assert status == 200 and "twinflow_q_rev" in page
    assert airflow.page("/twinflow/reports/some_other_dag")[0] == 404


def test_checkpoint_rotation_backfill_compaction_and_rollback(airflow, airflow_env, tmp_path,
                                                              statsd):
    _installed_as_a_user_installs_it(airflow)
    home = Path(airflow_env["TWINFLOW_HOME"])
    state = home / "state" / "q_rev"
    _arrive(tmp_path, 10)
    # The rotation runs on the query's Asset: unpaused first (a paused DAG's Asset events are
    # dropped), then the query DAG, whose run for its latest tick the scheduler makes at once.
    airflow.unpause("twinflow_checkpoints_q_rev")
    airflow.unpause("twinflow_q_rev")
    run = _ended(airflow, "twinflow_q_rev")
    airflow.pause("twinflow_q_rev")
    assert run["run_type"] == "scheduled" and run["logical_date"]
    key = _key(home / "runs" / "q_rev")
    assert key == run["logical_date"][:19].replace("-", "").replace(":", "")
    assert _latest(home, "q_rev").name == key
    # Its first try hung in the stream (the UDF took the marker) and was killed by the
    # scheduler at the step's timeout; the second try's result is the whole one, once:
    # nothing lost (every staged row streamed) and nothing duplicated.
    assert not (tmp_path / "hang").exists()
    tries = airflow.tries("twinflow_q_rev", run["dag_run_id"], "stream_and_parity")
    assert [t["try_number"] for t in tries] == [1, 2] and tries[1]["state"] == "success", tries
    assert "AirflowTaskTimeout" in airflow.task_log("twinflow_q_rev", run["dag_run_id"],
                                                    "stream_and_parity", 1)
    latest = _latest(home, "q_rev")
    assert json.loads((latest / "parity.json").read_text())["verdict"] == "equal"
    # published as Parquet (the default), typed: Flink's result read with the same types
    columns, rows = parquet_result(latest / "stream.parquet")
    report = json.loads((latest / "stream_report.json").read_text())
    flink = [line.split(",") for line in FIRST_HOUR.read_text().splitlines()]
    assert columns == flink[0] and sorted(rows) == sorted(
        typed(flink[1:], [c["type"] for c in report["columns"]]))
    assert parquet_result(latest / "changes.parquet")[0] == ["op", *columns]
    assert json.loads((latest / "stream_report.json").read_text())["new_input_rows"] == {
        "customers": 4, "orders": 4}
    _ops_report_and_metrics(airflow, statsd, key)
    # The run missed its one-minute deadline: the config's on_deadline was called.
    told = _appears(home / "late.json")
    assert "twinflow_q_rev" in json.loads(told.read_text())["dag_run"]
    # Airflow's own backfill would stream what arrives under past intervals' keys: refused,
    # pointing to twinflow's backfill DAG; nothing runs.
    refused = airflow.cli("backfill", "create", "--dag-id", "twinflow_q_rev", "--from-date",
                          "2020-01-01", "--to-date", "2022-01-01")
    assert refused.returncode != 0 and "does not allow backfill runs" in refused.stderr + \
        refused.stdout, refused
    assert "twinflow_backfill_q_rev" in airflow.dag("twinflow_q_rev")["description"]
    assert [r["run_type"] for r in airflow.runs("twinflow_q_rev")] == ["scheduled"]

    # Rotation on the Asset event: a snapshot, verified by resuming it in a scratch directory
    # (such a run has no logical date: keyed by when it was due, jobs/dag_parts.run_key).
    rotation = _ended(airflow, "twinflow_checkpoints_q_rev")
    assert rotation["run_type"] == "asset_triggered" and rotation["logical_date"] is None
    checked = home / "runs" / "checkpoints_q_rev"
    first = json.loads((checked / _key(checked) / "verify.json").read_text())
    assert len(_key(checked)) == len("20240101T100000123456")
    assert (first["verdict"], first["rows"]) == ("equal", 3)  # the regions
    assert first["probe"]  # at the live head: a probe micro-batch opened the state
    # (which snapshots a rotation prunes: tests/test_snapshots.py)
    kept = first["snapshot"]
    assert [s["id"] for s in snapshots.list_snapshots(state)] == [kept]
    at_snapshot = last_commit(state / "checkpoint")
    scheduled = parquet_result(_latest(home, "q_rev") / "stream.parquet")

    # Backfill the interval in batch mode, by hand: gated and published as the run was.
    shutil.rmtree(_latest(home, "q_rev"))  # lost, say
    _ended(airflow, "twinflow_backfill_q_rev", airflow.trigger(
        "twinflow_backfill_q_rev", {"start": key, "end": key}))
    latest = _latest(home, "q_rev")
    assert latest.name == key
    assert json.loads((latest / "parity.json").read_text())["verdict"] == "batch_backfill"
    backfilled = parquet_result(latest / "stream.parquet")  # an updating query: its whole
    assert backfilled[0] == scheduled[0] and sorted(backfilled[1]) == sorted(scheduled[1])

    # Compaction, the run the scheduler makes for its latest tick: a sweep micro-batch through
    # the join and the aggregate (nothing is idle for an hour here), then the audit proves the
    # result unchanged.
    airflow.unpause("twinflow_compact_q_rev")
    _ended(airflow, "twinflow_compact_q_rev")
    airflow.pause("twinflow_compact_q_rev")
    (compacted,) = (home / "runs" / "compact_q_rev").glob("*/compact.json")
    done = json.loads(compacted.read_text())
    assert (done["compacted"], done["expired_keys"], done["not_swept"]) == (True, 0, [])
    assert done["after"]["keys"] == done["before"]["keys"] > 0
    assert len(history.history(state)["compactions"]) == 2  # one row per operator
    (logged,) = [json.loads(p.read_text()) for p in (home / "audit" / "q_rev").glob("*")]
    assert (logged["action"], logged["before"]) == ("compact", done["before"])

    # Rollback to the verified snapshot, by hand: the state is as it was before the sweep.
    assert last_commit(state / "checkpoint") == at_snapshot + 1
    _ended(airflow, "twinflow_rollback_q_rev",
           airflow.trigger("twinflow_rollback_q_rev", {"snapshot": kept}))
    assert last_commit(state / "checkpoint") == at_snapshot
    assert lifecycle.run_keys(state) == [key]
    assert not (tmp_path / "dag_processor_home").exists()
