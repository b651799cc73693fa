"""``twinflow demo``: the main job on embedded defaults (local Spark, Airflow on SQLite, GX).

1. the seed OVER queries (examples/seed) on the seed data and a LEFT JOIN + GROUP BY query
   (examples/shop), batch + stream, parity checked;
2. a Great Expectations gate on one output;
3. one run of the query DAG (dags/queries/tmall_max_price.json) with ``dag.test()``;
then a summary of where every output and report is.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

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


def run_demo(out: Path) -> int:
    from operators_lib.paths import home
    from operators_lib.pipeline import RunConfig, run
    from operators_lib.quality import validate_csv
    from operators_lib.spark import get_spark

    spark = get_spark()
    lines, code = [], 0
    for name, (sql, data) in QUERIES.items():
        target = out / name
        result = run(RunConfig(sql, data, "both", target), spark)
        r = result.report
        lines.append(f"  {name:22s} parity={r['parity']['verdict']:24s} "
                     f"batch={r['batch']['rows']} stream={r['stream']['rows']} "
                     f"late={r['late_rows']} rejected={r['rejected_rows']}  -> {target}/")
        code = code or result.exit_code
    gate = validate_csv(out / "rows_max_price" / "stream.csv", "tmall_max_price",
                        result_path=out / "rows_max_price" / "validation.json")
    spark.stop()
    dag_state, published = _dag_run()
    print("\ntwinflow demo")
    print("queries (both modes, parity checked):")
    print("\n".join(lines))
    print(f"great expectations gate on rows_max_price: "
          f"{'passed' if gate['success'] else 'FAILED'} ({gate['evaluated']} expectations) "
          f"-> {out / 'rows_max_price' / 'validation.json'}")
    print(f"airflow DAG twinflow_tmall_max_price (dag.test): {dag_state}; published: {published}")
    print(f"query outputs: {out}/<query>/ (report.json, batch.csv, changelog.csv, stream.csv, "
          "late.csv, rejected.csv)")
    print(f"DAG state (checkpoints), run directories and published results: {home()}/")
    return code or (0 if gate["success"] and dag_state == "success" else 1)


def _dag_run() -> tuple[str, str]:
    """One scheduled run of the seed query DAG, with fresh state."""
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

    db.initdb()
    import importlib.util

    spec = importlib.util.spec_from_file_location("twinflow_queries",
                                                  REPO / "dags" / "twinflow_queries.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    dag = module.build_dag(REPO / "dags" / "queries" / "tmall_max_price.json")
    run = dag.test(logical_date=datetime.now(UTC).replace(microsecond=0))
    latest = home() / "published" / "tmall_max_price" / "LATEST"
    published = str(latest.parent / latest.read_text().strip()) if latest.exists() else "nothing"
    return str(run.state), published


def main(out: Path) -> int:
    code = run_demo(out)
    print(json.dumps({"exit_code": code}))
    return code
