"""OVER benchmark: twinflow batch vs stream (1 and 10 micro-batches) vs real Flink streaming.

    .venv/bin/python benchmarks/over_bench.py [--rows 1000000] [--partitions 1000] [--skip-flink]

Data: benchmarks/data/over_<rows>.csv (generated once, not committed): k = row % partitions,
v DOUBLE, ts increasing by 10 ms per row (in order: no late rows). Queries (MAX over ROWS 2
PRECEDING and over RANGE INTERVAL '2' MINUTE, PARTITION BY k). Timed: query execution from
staged input to written result (parquet), excluding JVM start and CSV ingest (reported apart).
Flink: PyFlink 2.3 from the oracle set-up, parallelism 2, CSV source, blackhole sink, timed
from submit to job end (JVM start excluded), run by benchmarks/flink_query.py.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
DDL = """CREATE TABLE events (
  k INT,
  v DOUBLE,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts
)"""
QUERIES = {
    "over_rows_max": "SELECT k, v, ts, MAX(v) OVER (PARTITION BY k ORDER BY ts "
                     "ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS m FROM events",
    "over_range_max": "SELECT k, v, ts, MAX(v) OVER (PARTITION BY k ORDER BY ts "
                      "RANGE BETWEEN INTERVAL '2' MINUTE PRECEDING AND CURRENT ROW) AS m "
                      "FROM events",
}


def generate(rows: int, partitions: int) -> Path:
    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"over_{rows}_{partitions}.csv"
    if not path.exists():
        rng = np.random.default_rng(42)
        ts = pd.Timestamp("2024-01-01") + pd.to_timedelta(np.arange(rows) * 10, unit="ms")
        df = pd.DataFrame({"k": np.arange(rows) % partitions,
                           "v": np.round(rng.uniform(0, 1000, rows), 2),
                           "ts": ts.strftime("%Y-%m-%d %H:%M:%S.%f").str[:-3]})
        df.to_csv(path, index=False)
        df.to_csv(path.with_suffix(".noheader.csv"), index=False, header=False)
    return path


def bench_twinflow(csv: Path, rows: int) -> dict:
    from operators_lib.batch import batch_dataframe
    from operators_lib.engine.spark import get_spark
    from operators_lib.io import ingest
    from operators_lib.sql.planner import compile_query
    from operators_lib.sql.script import load_script
    from operators_lib.state import lifecycle
    from operators_lib.stream.planner import stream_dataframe
    from operators_lib.stream.runner import run_available_now

    spark = get_spark()
    results = {}
    for name, query in QUERIES.items():
        work = DATA / "work" / name  # one directory per query: Spark's state store
        shutil.rmtree(work, ignore_errors=True)  # maintenance may still touch the last one
        work.mkdir(parents=True)
        sql = work / "query.sql"
        sql.write_text(DDL + ";\n" + query)
        plan = compile_query(load_script([sql]), spark)
        table = plan_table(plan)
        t0 = time.perf_counter()
        parsed = ingest.parse(spark, {"events": ingest.TableInput(table, [csv])}, work / "parsed")
        ingest_s = time.perf_counter() - t0
        r = {"ingest_s": round(ingest_s, 2)}
        for label, per_batch in (("batch", rows), ("stream_1_batch", rows),
                                 ("stream_10_batches", rows // 10)):
            staged = work / label / "staged" / "events"
            files = ingest.stage(spark, parsed, "events", staged, per_batch)
            if label == "batch":
                out = batch_dataframe(spark, plan, {"events": files})
                t = time.perf_counter()
                out.write.mode("overwrite").parquet(str(work / label / "out"))
                secs = time.perf_counter() - t
            else:
                lifecycle.offer(work / label, "events", files, ends=table)
                sdf = stream_dataframe(spark, plan, {"events": staged})
                srun = run_available_now(sdf, work / label / "ckpt", work / label / "out")
                secs = srun.seconds
                r[f"{label}_micro_batches"] = srun.micro_batches
                r[f"{label}_duration_ms"] = [
                    {k: p["durationMs"].get(k) for k in ("addBatch", "queryPlanning")}
                    | {"rows": p["numInputRows"]} for p in srun.progress]
            r[f"{label}_s"] = round(secs, 2)
            r[f"{label}_rows_per_s"] = int(rows / secs)
            print(name, label, f"{secs:.1f}s", f"{rows / secs:,.0f} rows/s", flush=True)
        results[name] = r
    spark.stop()
    return results


def plan_table(plan):
    from operators_lib.plan import scans

    return scans(plan)[0].table


def bench_flink(csv: Path) -> dict:
    python = Path.home() / ".cache" / "flink-venv" / "bin" / "python"
    if not python.exists():
        return {"skipped": "no Flink venv (see ../shared/flink-oracle/README.md)"}
    out = {}
    for name, query in QUERIES.items():
        proc = subprocess.run([str(python), str(HERE / "flink_query.py"), "--csv",
                               str(csv.with_suffix(".noheader.csv")), "--ddl", DDL,
                               "--sink", "k INT, v DOUBLE, ts TIMESTAMP(3), m DOUBLE",
                               "--query", query], capture_output=True, text=True, timeout=1800)
        line = [x for x in proc.stdout.splitlines() if x.startswith("{")]
        out[name] = json.loads(line[-1]) if line else {"error": proc.stderr[-500:]}
        print(name, "flink", out[name], flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--partitions", type=int, default=1000)
    ap.add_argument("--skip-flink", action="store_true")
    args = ap.parse_args()
    csv = generate(args.rows, args.partitions)
    result = {"date": date.today().isoformat(), "machine": f"{platform.machine()}, "
              f"{os.cpu_count()} cores, {platform.python_version()}",
              "rows": args.rows, "partitions": args.partitions,
              "command": " ".join(["benchmarks/over_bench.py", *sys.argv[1:]]),
              "twinflow": bench_twinflow(csv, args.rows)}
    if not args.skip_flink:
        result["flink"] = bench_flink(csv)
    (HERE / "results").mkdir(exist_ok=True)
    path = HERE / "results" / f"over_{result['date']}.json"
    path.write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
