"""``twinflow demo``: the main job on embedded defaults (local Spark, Airflow on SQLite, GX).

1. the seed OVER queries (examples/seed) on the seed data and a LEFT JOIN + GROUP BY query
   (examples/shop), batch + stream, parity checked;
2. a Great Expectations gate on one output;
3. one run of the query DAG (dags/queries/tmall_max_price.json) with ``dag.test()``;
then a summary of where every output and report is. A line per step; what the engines print
goes to ``<out>/engine.log`` (``--verbose``: to the console).
"""

from __future__ import annotations

import logging
import os
import sys
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path

from jobs.console import Console, engine_output_to
from jobs.run_output import PARITY, RunProgress, plural
from operators_lib.errors import TwinflowError

REPO = Path(__file__).resolve().parents[1]
SEED = REPO / "examples" / "seed"
SHOP = REPO / "examples" / "shop"
# name -> (SQL files, {table: CSV file or directory})
QUERIES = {
    **{name: ([SEED / ddl, SEED / f"{name}.sql"], {table: SEED / f"{table}.csv"})
       for name, ddl, table in [
           ("rows_max_price", "tmall_item.sql", "tmall_item"),
           ("range_max_price", "tmall_item.sql", "tmall_item"),
           ("behavior_rows_count", "user_behavior.sql", "user_behavior"),
           ("behavior_range_count", "user_behavior.sql", "user_behavior")]},
    # LEFT JOIN + GROUP BY: a changelog with retractions
    "revenue_by_region": ([SHOP / "shop.sql", SHOP / "revenue_by_region.sql"],
                          {t: SHOP / "incoming" / t for t in ("customers", "orders")}),
}


def main(out: Path, verbose: bool = False) -> int:
    log = None if verbose else out / "engine.log"
    with engine_output_to(log) as (stdout, stderr):
        console = Console(stdout, stderr, progress=not verbose)
        try:
            with console.ticking():
                return run_demo(out, console, log, verbose)
        except TwinflowError as e:
            console.error(f"twinflow demo: error: {e}")
            return e.exit_code
        except Exception:
            console.error(traceback.format_exc().rstrip())
            console.error("twinflow demo: internal error (exit 3)"
                          + (f"; what the engines printed is in {log}" if log else ""))
            return 3
        finally:
            if log is not None:
                # Airflow made the root logger write INFO to stderr: what is logged at exit
                # (py4j closing its connection) would reach the console, after the block.
                logging.getLogger().setLevel(logging.WARNING)


def run_demo(out: Path, console: Console, log: Path | None, verbose: bool) -> int:
    from operators_lib.engine.spark import get_spark
    from operators_lib.io.output import read_csv_frame
    from operators_lib.ops.quality import validate
    from operators_lib.ops.reports import BoundedReport
    from operators_lib.paths import home
    from operators_lib.runs.lifecycle import run
    from operators_lib.runs.spec import RunSpec, Steps

    t0 = time.perf_counter()
    console.activity("spark", "starting")
    spark = get_spark()
    rows, code = [], 0
    for name, (sql, data) in QUERIES.items():
        target = out / name
        console.activity("query", f"{name}: reading the SQL and the input")
        result = run(RunSpec.bounded_run(sql, data, "both", target), spark, Steps.RUN,
                     RunProgress(console, "both", name))
        r = result.report
        verdict = PARITY.get(r.parity.verdict, r.parity.verdict)
        console.step("query", f"{name}: parity {verdict}, {plural(r.batch.rows, 'row')}  "
                              f"{r.timings_s['total']:.1f} s")
        rows.append([name, verdict, str(r.batch.rows), str(r.stream.rows), str(r.late_rows),
                     str(r.rejected_rows), f"{target}/"])
        code = code or result.exit_code
    checked = out / "rows_max_price"
    console.activity("gate", "great expectations on rows_max_price")
    columns = [(c.name, c.type) for c in BoundedReport.load(checked).columns]
    gate = validate(read_csv_frame(spark, checked / "stream.csv", columns), "tmall_max_price",
                    checked.name, result_path=checked / "validation.json",
                    progress_bars=verbose)
    gate_text = f"{'passed' if gate['success'] else 'FAILED'} ({gate['evaluated']} expectations)"
    console.step("gate", f"great expectations on rows_max_price: {gate_text}")
    spark.stop()
    dag_state, tasks, published = _dag_run(console)
    console.step("airflow", f"twinflow_tmall_max_price (dag.test): {dag_state} ({tasks})")
    code = code or (0 if gate["success"] and dag_state == "success" else 1)

    console.line()
    console.table(rows, ["query", "parity", "batch", "stream", "late", "rejected", "outputs"])
    console.line()
    summary = [
        ["files", "<query>/: report.json batch.csv changelog.csv stream.csv late.csv "
                  "rejected.csv"],
        ["gate", f"{gate_text}  {checked / 'validation.json'}"],
        ["airflow", f"{dag_state}, published: {published}"],
        ["state", f"{home()}/  (DAG checkpoints, run directories, published results)"]]
    if log is not None:
        summary.append(["log", str(log)])
    summary.append(["exit", f"{code}  ({time.perf_counter() - t0:.0f} s)"])
    console.table(summary)
    return code


class _TaskStarts(logging.Handler):
    """Shows which task ``dag.test()`` runs (it logs "[DAG TEST] starting task_id=%s ...")."""

    def __init__(self, console: Console, dag_id: str) -> None:
        super().__init__(logging.INFO)
        self.console, self.dag_id = console, dag_id

    def emit(self, record: logging.LogRecord) -> None:
        if str(record.msg).startswith("[DAG TEST] starting task_id") and record.args:
            self.console.activity("airflow", f"{self.dag_id} (dag.test): {record.args[0]}")


def _dag_run(console: Console) -> tuple[str, str, str]:
    """One scheduled run of the seed query DAG, with fresh state: its state, its tasks' states
    and what it published."""
    import shutil

    from operators_lib.paths import home

    airflow_home = home() / "airflow"
    os.environ.setdefault("AIRFLOW_HOME", str(airflow_home))
    os.environ.setdefault("AIRFLOW__CORE__DAGS_FOLDER", str(REPO / "dags"))
    os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
    os.environ.setdefault("AIRFLOW_CONN_SPARK_DEFAULT", "spark://local%5B2%5D")
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]
    for d in ("state", "runs", "published"):
        shutil.rmtree(home() / d / "tmall_max_price", ignore_errors=True)
    from airflow.utils import db

    console.activity("airflow", "initialising the metadata database")
    db.initdb()
    import importlib.util

    spec = importlib.util.spec_from_file_location("twinflow_queries",
                                                  REPO / "dags" / "twinflow_queries.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    dag = module.build_dag(REPO / "dags" / "queries" / "tmall_max_price.json")
    console.activity("airflow", f"{dag.dag_id} (dag.test): starting")
    starts = _TaskStarts(console, dag.dag_id)
    logger = logging.getLogger("airflow.sdk.definitions.dag")
    logger.addHandler(starts)
    try:
        run = dag.test(logical_date=datetime.now(UTC).replace(microsecond=0))
    finally:
        logger.removeHandler(starts)
    states = {ti.task_id: ti.state for ti in run.get_task_instances()}
    tasks = ", ".join(f"{task} {states.get(task)}" for task in dag.task_ids)
    latest = home() / "published" / "tmall_max_price" / "LATEST"
    published = str(latest.parent / latest.read_text().strip()) if latest.exists() else "nothing"
    return str(run.state), tasks, published
