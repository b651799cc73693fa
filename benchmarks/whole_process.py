"""Whole-process wall time per operator: twinflow stream and batch, Flink 2.3, and a
hand-written Spark SQL job, on the same CSV files (issue 17's table).

    .venv/bin/python benchmarks/whole_process.py [--rows 1000000] [--queries over_rows,...]
        [--contenders stream,batch,flink,spark] [--rows-per-batch N] [--out FILE]

Each contender is one process, timed from its start to its exit (JVM start, planning, reading
the CSV and writing the result included), run one after the other (never two at once on this
2-core machine):

- ``stream``: ``twinflow run --mode stream`` (one micro-batch per table unless
  ``--rows-per-batch``), every output file written.
- ``batch``: ``twinflow run --mode batch``.
- ``flink``: PyFlink 2.3 streaming, parallelism 2, CSV sources, blackhole sink
  (benchmarks/flink_query.py; its own timing excludes JVM start, ours does not).
- ``spark``: the query written by hand in Spark SQL (benchmarks/spark_sql_job.py): Spark's CSV
  reader with the schema, the query, Spark's CSV writer; local[2], Spark's other defaults.

Peak memory is sampled every 0.2 s over the contender's process tree: ``peak_driver_mb`` is the
largest resident set of the driver's processes (the JVM, which holds the local executors
too, and the Python driver) summed at one instant; Python workers are counted apart.

Data: the generators of the per-operator benchmarks (benchmarks/data, not committed).
Results: benchmarks/results/whole_process_<date>.json, and a markdown table on stdout.
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
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))
from benchmarks import (  # noqa: E402
    join_bench,
    over_bench,
    time_joins_bench,
    topn_bench,
    windows_bench,
)
from benchmarks.windows_bench import FLINK_PYTHON  # noqa: E402

DATA = HERE / "data"
CONTENDERS = ["stream", "batch", "flink", "spark"]


@dataclass
class Query:
    tables: dict[str, str]  # table -> CREATE TABLE (Flink's dialect: twinflow's and Flink's)
    flink: str  # the query (twinflow's and Flink's)
    sink: str  # Flink's blackhole sink columns
    spark: str  # the same query in Spark SQL
    spark_schemas: dict[str, str]  # table -> Spark DDL schema of its CSV


def _over(frame: str, spark_frame: str) -> Query:
    return Query(
        {"events": over_bench.DDL},
        "SELECT k, v, ts, MAX(v) OVER (PARTITION BY k ORDER BY ts " + frame + ") AS m FROM events",
        "k INT, v DOUBLE, ts TIMESTAMP(3), m DOUBLE",
        "SELECT k, v, ts, MAX(v) OVER (PARTITION BY k ORDER BY ts " + spark_frame
        + ") AS m FROM events",
        {"events": "k INT, v DOUBLE, ts TIMESTAMP"})


_TOPN_SCHEMA = {"shop_sales": "shop_id STRING, category STRING, sales BIGINT"}
_JOIN_SCHEMAS = {"orders": "oid BIGINT, k INT, amount DOUBLE",
                 "payments": "pid BIGINT, k INT, paid DOUBLE"}
_INTERVAL = time_joins_bench.QUERIES["interval"]
_TUMBLE, _TUMBLE_SINK = windows_bench.QUERIES["TUMBLE 1 min, COUNT per user"]

QUERIES: dict[str, Query] = {
    "over_rows": _over("ROWS BETWEEN 2 PRECEDING AND CURRENT ROW",
                       "ROWS BETWEEN 2 PRECEDING AND CURRENT ROW"),
    "over_range": _over("RANGE BETWEEN INTERVAL '2' MINUTE PRECEDING AND CURRENT ROW",
                        "RANGE BETWEEN INTERVAL 2 MINUTES PRECEDING AND CURRENT ROW"),
    "top10_per_category": Query(
        {"shop_sales": topn_bench.DDL}, topn_bench.QUERIES["top10_per_category"], topn_bench.SINK,
        topn_bench.QUERIES["top10_per_category"], _TOPN_SCHEMA),
    "global_top10": Query(
        {"shop_sales": topn_bench.DDL}, topn_bench.QUERIES["global_top10"], topn_bench.SINK,
        topn_bench.QUERIES["global_top10"], _TOPN_SCHEMA),
    "inner_join": Query(
        {"orders": join_bench.orders_ddl(), "payments": join_bench.payments_ddl()},
        join_bench.QUERIES["inner_join"], join_bench.SINK, join_bench.QUERIES["inner_join"],
        _JOIN_SCHEMAS),
    "left_join": Query(
        {"orders": join_bench.orders_ddl(), "payments": join_bench.payments_ddl()},
        join_bench.QUERIES["left_join"], join_bench.SINK, join_bench.QUERIES["left_join"],
        _JOIN_SCHEMAS),
    "tumble": Query(
        {"events": f"CREATE TABLE events ({windows_bench.COLUMNS}, {windows_bench.WATERMARK})"},
        _TUMBLE, _TUMBLE_SINK,
        "SELECT user_id, window.start AS window_start, COUNT(*) AS c FROM events "
        "GROUP BY user_id, window(ts, '1 minute')",
        {"events": "user_id INT, v INT, ts TIMESTAMP"}),
    "interval_join": Query(
        {t: time_joins_bench._ddl(_INTERVAL, t) for t in _INTERVAL["tables"]},
        _INTERVAL["query"], _INTERVAL["sink"],
        "SELECT o.order_id, o.amount, s.carrier, o.ts, s.ts AS shipped FROM orders o "
        "LEFT JOIN shipments s ON o.order_id = s.order_id AND s.ts BETWEEN o.ts AND "
        "o.ts + INTERVAL 1 MINUTE",
        {"orders": "order_id INT, amount INT, ts TIMESTAMP",
         "shipments": "order_id INT, carrier INT, ts TIMESTAMP"}),
}


def data(name: str, rows: int) -> dict[str, tuple[Path, Path]]:
    """Per table of query ``name``: its CSV with a header and without (for Flink); ``rows``
    input rows in all (the joins: half per table)."""
    bare = lambda p: p.with_suffix(".noheader.csv")  # noqa: E731
    if name.startswith("over"):
        path = over_bench.generate(rows, 1000)
        return {"events": (path, bare(path))}
    if name in ("top10_per_category", "global_top10"):
        path = topn_bench.generate(rows)
        return {"shop_sales": (path, bare(path))}
    if name.endswith("_join") and name != "interval_join":
        paths = join_bench.generate(rows // 2, 100_000)
        return {t: (paths[t], bare(paths[t])) for t in ("orders", "payments")}
    if name == "tumble":
        return {"events": windows_bench.generate(rows, 1000)}
    return time_joins_bench.generate("interval", rows)


class Sampler(threading.Thread):
    """Peak resident memory of a process tree, sampled every 0.2 s."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.root, self.done = psutil.Process(pid), threading.Event()
        self.driver_mb = self.workers_mb = 0.0

    def run(self) -> None:
        while not self.done.wait(0.2):
            try:
                procs = [self.root, *self.root.children(recursive=True)]
            except psutil.NoSuchProcess:
                return
            driver = workers = 0
            for p in procs:
                try:
                    rss, cmd = p.memory_info().rss, " ".join(p.cmdline())
                except psutil.Error:
                    continue
                if any(w in cmd for w in ("pyspark.daemon", "worker_daemon", "pyspark/worker")):
                    workers += rss
                else:
                    driver += rss
            self.driver_mb = max(self.driver_mb, driver / 2**20)
            self.workers_mb = max(self.workers_mb, workers / 2**20)


def timed(cmd: list[str], log: Path) -> dict:
    """Run ``cmd`` (output to ``log``); its wall time and peak memory. Raises on failure."""
    t0 = time.perf_counter()
    with open(log, "wb") as fh:
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=fh, stderr=subprocess.STDOUT)
        sampler = Sampler(proc.pid)
        sampler.start()
        code = proc.wait()
    seconds = time.perf_counter() - t0
    sampler.done.set()
    sampler.join()
    if code != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {code}: see {log}")
    return {"seconds": round(seconds, 2), "peak_driver_mb": round(sampler.driver_mb),
            "peak_python_workers_mb": round(sampler.workers_mb)}


def attempt(cmd: list[str], log: Path, label: str) -> dict:
    """``timed``, or the error: one failed run does not lose the others."""
    try:
        result = timed(cmd, log)
    except RuntimeError as e:
        result = {"error": str(e)}
    print(label, result, flush=True)
    return result


def machine() -> str:
    return (f"{platform.machine()}, {os.cpu_count()} cores, "
            f"{psutil.virtual_memory().total / 2**30:.0f} GB")


def command(contender: str, q: Query, tables: dict[str, tuple[Path, Path]], work: Path,
            rows_per_batch: int) -> list[str]:
    if contender in ("stream", "batch"):
        shutil.rmtree(work / f"out_{contender}", ignore_errors=True)  # no state of a run before
        ddl = work / "ddl.sql"
        ddl.write_text("".join(t + ";\n" for t in q.tables.values()))
        (work / "q.sql").write_text(q.flink + ";\n")
        extra = ["--rows-per-batch", str(rows_per_batch)] if contender == "stream" else []
        return [sys.executable, "-m", "jobs.cli", "run", "--sql", str(ddl), "--sql",
                str(work / "q.sql"), *[a for t, (p, _) in tables.items()
                                       for a in ("--data", f"{t}={p}")],
                "--mode", contender, "--out", str(work / f"out_{contender}"), *extra]
    if contender == "flink":
        return [str(FLINK_PYTHON), str(HERE / "flink_query.py"),
                *[a for t in q.tables for a in ("--csv", str(tables[t][1]), "--ddl",
                                                 q.tables[t])],
                "--sink", q.sink, "--query", q.flink]
    return [sys.executable, str(HERE / "spark_sql_job.py"), "--query", q.spark,
            "--out", str(work / "out_spark"),
            *[a for t, (p, _) in tables.items()
              for a in ("--table", f"{t}={p}", "--schema", q.spark_schemas[t])]]


def _ratio(s: dict, a: str, b: str) -> str:
    return f"{s[a] / s[b]:.1f} ×" if s[a] and s[b] else ""


def markdown(results: list[dict]) -> str:
    lines = ["| query | rows | stream | batch | Flink 2.3 | Spark SQL by hand | stream / Flink "
             "| stream / batch | batch / Spark |", "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        s = {c: r.get(c, {}).get("seconds") for c in CONTENDERS}
        lines.append(f"| {r['query']} | {r['rows']:,} | " + " | ".join(
            f"{s[c]:.1f} s" if s[c] else r.get(c, {}).get("error", "") for c in CONTENDERS)
            + f" | {_ratio(s, 'stream', 'flink')} | {_ratio(s, 'stream', 'batch')} | "
              f"{_ratio(s, 'batch', 'spark')} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--queries", default=",".join(QUERIES))
    ap.add_argument("--contenders", default=",".join(CONTENDERS))
    ap.add_argument("--rows-per-batch", type=int,
                    help="stream: rows per micro-batch (default: all of a table's rows)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    names, contenders = args.queries.split(","), args.contenders.split(",")
    if unknown := set(names) - set(QUERIES) or set(contenders) - set(CONTENDERS):
        ap.error(f"unknown: {sorted(unknown)}")
    if "flink" in contenders and not FLINK_PYTHON.exists():
        ap.error(f"no Flink at {FLINK_PYTHON} (see ../shared/flink-oracle/README.md)")
    results = []
    for name in names:
        q, tables = QUERIES[name], data(name, args.rows)
        work = DATA / "whole_process" / name
        work.mkdir(parents=True, exist_ok=True)
        row: dict = {"query": name, "rows": args.rows}
        for contender in contenders:
            row[contender] = attempt(command(contender, q, tables, work,
                                             args.rows_per_batch or args.rows),
                                     work / f"{contender}.log", f"{name} {contender}")
        results.append(row)
    record = {"date": date.today().isoformat(), "command": " ".join(sys.argv),
              "machine": machine(),
              "results": results}
    out = args.out or HERE / "results" / f"whole_process_{record['date']}.json"
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
