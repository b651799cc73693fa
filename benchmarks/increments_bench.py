"""Scheduled increments: does a run cost what its new data costs, or more each time?

    .venv/bin/python benchmarks/increments_bench.py [--runs 10] [--rows 100000] [--query over]

Each run is what a DAG run does: a new input file lands, then ``spark-submit
jobs/twinflow_job.py increment`` (the stream step, then parity, in one driver: the whole
process, JVM start included, local[2]), with the query's state kept between runs under a
scratch ``TWINFLOW_HOME``. Per run: the process's wall time, the stream step's own seconds
(its stream_report.json), and the peak resident memory of the driver (its JVM, and its Python
process), sampled every 0.1 s. (Before 2026-11-29 the two steps were two processes.)

Queries: ``over`` (MAX OVER ROWS 2 PRECEDING per item, 1,000 items, an append-only result),
``over_range`` (the same over RANGE INTERVAL '2' MINUTE: parity reads only what its frames
reach, operators_lib/parity/scope.py), ``over_local`` (OVER ROWS, each run's rows on 100
partitions of its own: parity reads only the keys a run touched) and ``join`` (examples/shop:
customers LEFT JOIN orders, GROUP BY region, an updating result; each run 10% new customers,
90% orders of customers seen so far). Data is generated into benchmarks/data/ (not
committed); event times rise from run to run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import threading
import time
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd
import psutil

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DATA = HERE / "data" / "increments"
SEED, SHOP = REPO / "examples" / "seed", REPO / "examples" / "shop"
RANGE_SQL = """SELECT itemID, itemType, onSellTime, price,
  MAX(price) OVER (PARTITION BY itemType ORDER BY onSellTime
    RANGE BETWEEN INTERVAL '2' MINUTE PRECEDING AND CURRENT ROW) AS maxPrice
FROM tmall_item"""


def over_file(run: int, rows: int, folder: Path, local: bool = False) -> None:
    """``local``: the run's rows fall on 100 of the 1,000 partitions (the run's own)."""
    rng = np.random.default_rng(run)
    start = pd.Timestamp("2024-01-01") + pd.Timedelta(hours=run)
    ts = start + pd.to_timedelta(np.sort(rng.integers(0, 3_600_000, rows)), unit="ms")
    item = (run * 100 + rng.integers(0, 100, rows)) % 1000 if local else \
        rng.integers(0, 1000, rows)
    pd.DataFrame({"itemID": [f"ITEM{i:04d}" for i in item],
                  "itemType": [f"type{i % 1000}" for i in item],
                  "onSellTime": ts.strftime("%Y-%m-%d %H:%M:%S.%f").str[:-3],
                  "price": rng.integers(100, 100_000, rows) / 100}).to_csv(
        folder / f"{run:03d}.csv", index=False)


def join_files(run: int, rows: int, folders: dict[str, Path]) -> None:
    rng = np.random.default_rng(run)
    new_customers = rows // 10
    first = run * new_customers
    ids = np.arange(first, first + new_customers)
    pd.DataFrame({"cust_id": [f"c{i}" for i in ids], "name": [f"n{i}" for i in ids],
                  "region": [f"r{i % 20}" for i in ids]}).to_csv(
        folders["customers"] / f"{run:03d}.csv", index=False)
    orders = rows - new_customers
    cust = rng.integers(0, first + new_customers, orders)
    pd.DataFrame({"order_id": np.arange(run * rows, run * rows + orders),
                  "cust_id": [f"c{i}" for i in cust],
                  "amount": [f"{a / 100:.2f}" for a in rng.integers(100, 100_000, orders)]}
                 ).to_csv(folders["orders"] / f"{run:03d}.csv", index=False)


def config(query: str, work: Path) -> tuple[Path, dict[str, Path]]:
    if query.startswith("over"):
        sql = [SEED / "tmall_item.sql", SEED / "rows_max_price.sql"]
        if query == "over_range":  # parity reads only the input its frames reach
            sql[1] = work / "range_max_price.sql"
            sql[1].write_text(RANGE_SQL)
        inputs = {"tmall_item": work / "incoming" / "tmall_item"}
    else:
        sql = [SHOP / "shop.sql", SHOP / "revenue_by_region.sql"]
        inputs = {t: work / "incoming" / t for t in ("customers", "orders")}
    for folder in inputs.values():
        folder.mkdir(parents=True, exist_ok=True)
    path = work / f"{query}.json"
    path.write_text(json.dumps({"name": f"bench_{query}", "sql": [str(p) for p in sql],
                                "inputs": {t: str(p) for t, p in inputs.items()},
                                "expectations": "none", "rows_per_batch": 25_000}))
    return path, inputs


def step(name: str, cfg: Path, run_dir: Path, home: Path) -> dict:
    """One DAG step as its spark-submit runs it: wall time and the driver's peak memory."""
    cmd = [str(REPO / ".venv" / "bin" / "spark-submit"), "--master", "local[2]",
           "--conf", "spark.sql.session.timeZone=UTC", str(REPO / "jobs" / "twinflow_job.py"),
           name, "--config", str(cfg), "--run-dir", str(run_dir)]
    env = {**os.environ, "TWINFLOW_HOME": str(home), "PYTHONPATH": str(REPO),
           "PYSPARK_PYTHON": sys.executable}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    peak = {"jvm": 0, "python": 0}
    done = threading.Event()

    def sample() -> None:
        root = psutil.Process(proc.pid)
        while not done.is_set():
            try:
                tree = [root, *root.children(recursive=True)]
            except psutil.Error:
                tree = []
            for p in tree:
                try:  # the driver's JVM, and the job's Python (not the workers, not bash)
                    name, line = p.name(), " ".join(p.cmdline())
                    kind = "jvm" if name == "java" else "python" if (
                        name.startswith("python") and "twinflow_job.py" in line) else None
                    if kind:
                        peak[kind] = max(peak[kind], p.memory_info().rss)
                except psutil.Error:
                    continue
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    done.set()
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"{name} failed ({proc.returncode}):\n{err[-3000:]}")
    return {"seconds": round(time.perf_counter() - t0, 1),
            "jvm_mb": peak["jvm"] // 2**20, "python_mb": peak["python"] // 2**20}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--query", choices=["over", "over_range", "over_local", "join"],
                    action="append")
    args = ap.parse_args()
    results = {}
    for query in args.query or ["over", "over_range", "join"]:
        work = DATA / query
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        cfg, inputs = config(query, work)
        rows = []
        for run in range(args.runs):
            if query.startswith("over"):
                over_file(run, args.rows, inputs["tmall_item"], query == "over_local")
            else:
                join_files(run, args.rows, inputs)
            run_dir = work / "home" / "runs" / f"20240101T{run:02d}0000"  # one run an hour
            s = step("increment", cfg, run_dir, work / "home")
            parity = json.loads((run_dir / "parity.json").read_text())
            stream = json.loads((run_dir / "stream_report.json").read_text())
            row = {"run": run + 1, "run_s": s["seconds"], "stream_s": stream["seconds"],
                   "jvm_mb": s["jvm_mb"], "python_mb": s["python_mb"],
                   "verdict": parity["verdict"], "input_rows": parity["input_rows"],
                   "parity_input": parity.get("parity_input")}
            rows.append(row)
            print(query, json.dumps(row), flush=True)
        results[query] = rows
    out = HERE / "results" / f"increments_{date.today()}.json"
    out.parent.mkdir(exist_ok=True)
    # One file a day: a run of one query keeps the other's results.
    before = json.loads(out.read_text())["results"] if out.exists() else {}
    out.write_text(json.dumps({"machine": platform.platform(), "cpus": os.cpu_count(),
                               "rows_per_run": args.rows, "results": before | results},
                              indent=2))
    for query, rows in results.items():
        print(f"\n{query}\n| run | input so far | process s | of which stream s | driver JVM MB "
              "| driver Python MB |\n|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r['run']} | {r['input_rows']:,} | {r['run_s']} | {r['stream_s']} | "
                  f"{r['jvm_mb']} | {r['python_mb']} |")


if __name__ == "__main__":
    main()
