"""Regular join benchmark: twinflow batch vs stream (1 and 10 micro-batches) vs real Flink.

    .venv/bin/python benchmarks/join_bench.py [--rows 500000] [--keys 100000] [--skip-flink]
        [--skip-layouts] [--queries inner_join,left_join]
        [--modes batch,stream_1_batch,stream_10_batches] [--out FILE]

Data: benchmarks/data/join_{orders,payments}_<rows>_<keys>.csv and customers_<keys>.csv
(generated once, not committed): orders(oid BIGINT, k INT, amount DOUBLE) and
payments(pid BIGINT, k INT, paid DOUBLE), ``--rows`` rows each, k uniform random over
[0, keys); customers(k INT, name STRING), one row per key. Queries: orders JOIN payments ON k
(inner and LEFT; ~rows²/keys output rows). Timed: query execution from staged input to written
result (parquet), excluding JVM start and CSV ingest (reported apart); rows/s counts input rows
(left + right). From the last progress of each stream run: the state operators' numRowsTotal,
memoryUsedBytes and custom (RocksDB) metrics, plus the bytes of the checkpoint's state files.

Layouts: orders LEFT JOINed, as stream in 1 micro-batch, with a right side whose declared
PRIMARY KEY selects each of twinflow's join state layouts (stream/join.py): customers with
PRIMARY KEY (k) (join key contains unique key), payments with PRIMARY KEY (pid) and orders
with PRIMARY KEY (oid) (input has unique key), payments and orders without (no unique key).
Flink: PyFlink 2.3 from the oracle set-up, parallelism 2, CSV sources, blackhole sink, timed
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


def orders_ddl(pk: bool = False) -> str:
    return ("CREATE TABLE orders (\n  oid BIGINT,\n  k INT,\n  amount DOUBLE"
            + (",\n  PRIMARY KEY (oid) NOT ENFORCED" if pk else "") + "\n)")


def payments_ddl(pk: bool = False) -> str:
    return ("CREATE TABLE payments (\n  pid BIGINT,\n  k INT,\n  paid DOUBLE"
            + (",\n  PRIMARY KEY (pid) NOT ENFORCED" if pk else "") + "\n)")


CUSTOMERS_DDL = ("CREATE TABLE customers (\n  k INT,\n  name STRING,\n"
                 "  PRIMARY KEY (k) NOT ENFORCED\n)")
JOIN = ("SELECT o.oid, o.k, o.amount, p.pid, p.paid FROM orders o {kind} payments p "
        "ON o.k = p.k")
MODES = ["batch", "stream_1_batch", "stream_10_batches"]
QUERIES = {"inner_join": JOIN.format(kind="JOIN"), "left_join": JOIN.format(kind="LEFT JOIN")}
SINK = "oid BIGINT, k INT, amount DOUBLE, pid BIGINT, paid DOUBLE"
# name -> (DDLs, query); the right side's layout is in the name, stream in 1 micro-batch.
# LEFT JOINs: an inner join of append-only inputs runs on Spark's own join, not on twinflow's
# join operator and its layouts.
LAYOUTS = {
    "join_key_contains_unique_key": (
        [orders_ddl(), CUSTOMERS_DDL],
        "SELECT o.oid, o.k, o.amount, c.name FROM orders o LEFT JOIN customers c ON o.k = c.k"),
    "input_has_unique_key": ([orders_ddl(pk=True), payments_ddl(pk=True)], QUERIES["left_join"]),
    "no_unique_key": ([orders_ddl(), payments_ddl()], QUERIES["left_join"]),
}


def generate(rows: int, keys: int) -> dict[str, Path]:
    """The CSV (with header) of each table; a ``.noheader.csv`` copy next to it for Flink."""
    DATA.mkdir(parents=True, exist_ok=True)
    paths = {"orders": DATA / f"join_orders_{rows}_{keys}.csv",
             "payments": DATA / f"join_payments_{rows}_{keys}.csv",
             "customers": DATA / f"join_customers_{keys}.csv"}
    frames = {
        "orders": lambda rng: pd.DataFrame({"oid": np.arange(rows, dtype=np.int64),
                                            "k": rng.integers(0, keys, rows),
                                            "amount": np.round(rng.uniform(0, 1000, rows), 2)}),
        "payments": lambda rng: pd.DataFrame({"pid": np.arange(rows, dtype=np.int64),
                                              "k": rng.integers(0, keys, rows),
                                              "paid": np.round(rng.uniform(0, 1000, rows), 2)}),
        "customers": lambda rng: pd.DataFrame({"k": np.arange(keys),
                                               "name": [f"customer-{i}" for i in range(keys)]}),
    }
    for seed, (name, path) in enumerate(paths.items()):
        if not path.exists() or not path.with_suffix(".noheader.csv").exists():
            df = frames[name](np.random.default_rng(42 + seed))
            df.to_csv(path.with_suffix(".noheader.csv"), index=False, header=False)
            df.to_csv(path, index=False)
    return paths


def csv_rows(path: Path) -> int:
    with open(path.with_suffix(".noheader.csv")) as fh:
        return sum(1 for _ in fh)


class Bench:
    """One Spark session; every CSV is read (validated and typed) once."""

    def __init__(self, paths: dict[str, Path]):
        from operators_lib.engine.spark import get_spark

        self.spark = get_spark()
        self.paths = paths
        self.parsed: dict = {}  # table -> ingest.Parsed
        self.ingest_s: dict[str, float] = {}

    def plan(self, work: Path, ddls: list[str], query: str):
        from operators_lib.io import ingest
        from operators_lib.plan import scans
        from operators_lib.sql.planner import compile_query
        from operators_lib.sql.script import load_script

        shutil.rmtree(work, ignore_errors=True)  # maintenance may still touch the last one
        work.mkdir(parents=True)
        sql = work / "query.sql"
        sql.write_text(";\n".join([*ddls, query]))
        plan = compile_query(load_script([sql]), self.spark)
        tables = {s.table.name.lower(): s.table for s in scans(plan)}
        for name, table in tables.items():
            if name not in self.parsed:
                t0 = time.perf_counter()
                parsed = ingest.parse(self.spark, {name: ingest.TableInput(
                                          table, [self.paths[name]])},
                                      work.parent / f"parsed_{name}")
                assert not parsed.rejected(name)
                self.ingest_s[name] = round(time.perf_counter() - t0, 2)
                self.parsed[name] = parsed
        return plan, tables

    def stage(self, tables, work: Path, batches: int, eof: bool) -> dict[str, Path | list]:
        from operators_lib.io import ingest
        from operators_lib.state import lifecycle

        staged = {}
        for name, table in tables.items():
            rows = self.parsed[name].rows(name)
            out = work / "staged" / name
            files = ingest.stage(self.spark, self.parsed[name], name, out,
                                 max(1, -(-rows // batches)))
            if eof:
                lifecycle.offer(work, name, files, ends=table)
            staged[name] = out if eof else files
        return staged

    def run(self, plan, tables, work: Path, label: str) -> dict:
        """One mode (``batch``, ``stream_1_batch``, ``stream_10_batches``): timings, state."""
        from operators_lib.batch import batch_dataframe
        from operators_lib.stream.planner import stream_dataframe
        from operators_lib.stream.runner import run_available_now

        rows = sum(self.parsed[n].rows(n) for n in tables)
        work = work / label
        r: dict = {}
        if label == "batch":
            staged = self.stage(tables, work, 1, eof=False)
            out = batch_dataframe(self.spark, plan, staged)
            t = time.perf_counter()
            out.write.mode("overwrite").parquet(str(work / "out"))
            secs = time.perf_counter() - t
            r["output_rows"] = self.spark.read.parquet(str(work / "out")).count()
        else:
            staged = self.stage(tables, work, 1 if label == "stream_1_batch" else 10, eof=True)
            sdf = stream_dataframe(self.spark, plan, staged)
            srun = run_available_now(sdf, work / "ckpt", work / "out")
            secs = srun.seconds
            r["micro_batches"] = srun.micro_batches
            r["duration_ms"] = [
                {k: p["durationMs"].get(k) for k in ("addBatch", "queryPlanning",
                                                      "triggerExecution")}
                | {"rows": p["numInputRows"]} | batch_state(p) for p in srun.progress]
            r["state"] = state_metrics(srun.progress)
            r["checkpoint_state_bytes"] = dir_bytes(work / "ckpt" / "state")
            r["changelog_rows"] = changelog_rows(work / "out")
        r["seconds"] = round(secs, 2)
        r["rows_per_s"] = int(rows / secs)
        return r


def state_metrics(progress: list) -> list[dict]:
    """The state operators of the last progress (the state after the whole input)."""
    if not progress:
        return []
    last = as_dict(progress[-1])
    return [{"operatorName": op.get("operatorName"), "numRowsTotal": op.get("numRowsTotal"),
             "memoryUsedBytes": op.get("memoryUsedBytes"),
             "numStateStoreInstances": op.get("numStateStoreInstances"),
             "customMetrics": op.get("customMetrics", {})}
            for op in last.get("stateOperators", [])]


def as_dict(progress) -> dict:
    """A progress as plain JSON (PySpark 4 wraps it, and its state operators, in classes)."""
    return json.loads(progress.json) if hasattr(progress, "json") else progress


def batch_state(progress) -> dict:
    """State rows updated and RocksDB bytes written by one micro-batch (all operators)."""
    ops = as_dict(progress).get("stateOperators") or []
    return {"stateRowsUpdated": sum(op["numRowsUpdated"] or 0 for op in ops),
            "rocksdbBytesWritten": sum((op["customMetrics"] or {}).get(
                "rocksdbTotalBytesWritten", 0) for op in ops)}


def attempt(fn, *args) -> dict:
    """``fn(*args)``, or the error (one failed run does not lose the others)."""
    try:
        return fn(*args)
    except Exception as e:  # recorded in the results: the bench goes on
        lines = [x for x in str(e).splitlines() if x.strip()]
        return {"error": f"{type(e).__name__}: {lines[0] if lines else ''}"[:500],
                "detail": [x for x in lines if "Error" in x][:5]}


def dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


def changelog_rows(path: Path) -> int:
    import pyarrow.parquet as pq

    return sum(pq.read_metadata(f).num_rows for f in path.glob("batch-*.parquet"))


STATE_KEYS = ("rocksdbSstFileSize", "rocksdbBytesCopied", "rocksdbFilesCopied")


def result_line(m: dict) -> list[str]:
    if "error" in m:
        return [m["error"]]
    return [f"{m['seconds']:.1f}s", f"{m['rows_per_s']:,} rows/s",
            *([state_line(m)] if "state" in m else [])]


def cell(m: dict) -> str:
    if "rows_per_s" not in m:
        return m.get("error", "-")[:60]
    return f"{m['rows_per_s']:,} rows/s ({m['seconds']} s)"


def state_line(r: dict) -> str:
    parts = [f"state rows {sum(o['numRowsTotal'] or 0 for o in r['state']):,}",
             f"mem {sum(o['memoryUsedBytes'] or 0 for o in r['state']):,} B"]
    for key in STATE_KEYS:
        vals = [o["customMetrics"][key] for o in r["state"] if key in o["customMetrics"]]
        if vals:
            parts.append(f"{key} {sum(vals):,}")
    # per micro-batch (the last progress is the empty one after the end-of-input marker)
    written = sum(b.get("rocksdbBytesWritten", 0) for b in r.get("duration_ms", []))
    parts.append(f"rocksdb bytes written (all batches) {written:,}")
    parts.append(f"checkpoint state files {r['checkpoint_state_bytes']:,} B")
    return ", ".join(parts)


def bench_twinflow(paths: dict[str, Path], skip_layouts: bool) -> dict:
    from operators_lib.plan import Join, find
    from operators_lib.stream.join_stream import join_layout

    bench = Bench(paths)
    results: dict = {}
    try:
        for name, query in QUERIES.items():
            work = DATA / "work" / name  # one directory per query: Spark's state store
            plan, tables = bench.plan(work, [orders_ddl(), payments_ddl()], query)
            r = {}
            for label in MODES:
                r[label] = m = attempt(bench.run, plan, tables, work, label)
                print(name, label, *result_line(m), flush=True)
            results[name] = r
        if not skip_layouts:
            layouts = {}
            for name, (ddls, query) in LAYOUTS.items():
                work = DATA / "work" / f"layout_{name}"
                plan, tables = bench.plan(work, ddls, query)
                join = find(plan, Join)[0]
                m = attempt(bench.run, plan, tables, work, "stream_1_batch")
                m["layouts"] = {"left": join_layout(join, "L")[0],
                                "right": join_layout(join, "R")[0]}
                m["right_rows"] = bench.parsed[scan_name(join.right)].rows(scan_name(join.right))
                layouts[name] = m
                print("layout", name, m["layouts"], *result_line(m), flush=True)
            results["layouts"] = layouts
        results["ingest_s"] = bench.ingest_s
    finally:
        bench.spark.stop()
    return results


def scan_name(node) -> str:
    from operators_lib.plan import scans

    return scans(node)[0].table.name.lower()


def bench_flink(paths: dict[str, Path]) -> dict:
    python = Path.home() / ".cache" / "flink-venv" / "bin" / "python"
    if not python.exists():
        return {"skipped": "no Flink venv (see ../shared/flink-oracle/README.md)"}
    out = {}
    for name, query in QUERIES.items():
        cmd = [str(python), str(HERE / "flink_query.py"), "--sink", SINK, "--query", query]
        for ddl, table in ((orders_ddl(), "orders"), (payments_ddl(), "payments")):
            cmd += ["--ddl", ddl, "--csv", str(paths[table].with_suffix(".noheader.csv"))]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
        line = [x for x in proc.stdout.splitlines() if x.startswith("{")]
        out[name] = json.loads(line[-1]) if line else {"error": proc.stderr[-500:]}
        print(name, "flink", out[name], flush=True)
    return out


def mode_table(names, tw: dict, fl: dict) -> list[str]:
    """A markdown table: per query, rows/s of each twinflow mode and of Flink."""
    lines = ["| query | batch | stream, 1 micro-batch | stream, 10 micro-batches | Flink |",
             "|---|---|---|---|---|"]
    for name in names:
        cells = [cell(tw[name].get(m, {})) for m in ("batch", "stream_1_batch",
                                                     "stream_10_batches")]
        cells.append(cell(fl.get(name, {})))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def summary(result: dict) -> str:
    tw, fl = result["twinflow"], result.get("flink", {})
    lines = mode_table(QUERIES, tw, fl)
    if "layouts" in tw:
        lines += ["", "| right side (layouts L/R) | stream, 1 micro-batch | state |",
                  "|---|---|---|"]
        for name, m in tw["layouts"].items():
            lines.append(f"| {name} ({m['layouts']['left']} / {m['layouts']['right']}) | "
                         f"{cell(m)} | {state_line(m) if 'state' in m else '-'} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=500_000)
    ap.add_argument("--keys", type=int, default=100_000)
    ap.add_argument("--skip-layouts", action="store_true")
    args = parse(ap, QUERIES, MODES, "join")
    start = time.perf_counter()
    paths = generate(args.rows, args.keys)
    result = header("join_bench", rows=args.rows, keys=args.keys,
                    input_rows={n: csv_rows(p) for n, p in paths.items()})
    result["twinflow"] = bench_twinflow(paths, args.skip_layouts)
    if not args.skip_flink:
        result["flink"] = bench_flink(paths)
    finish(result, start, args.out, summary(result))


def parse(ap: argparse.ArgumentParser, queries: dict, modes: list, bench: str):
    """Parse with the options every benchmark has; keep only the chosen queries and modes."""
    ap.add_argument("--skip-flink", action="store_true")
    ap.add_argument("--queries", default=",".join(queries), help="comma-separated subset")
    ap.add_argument("--modes", default=",".join(modes), help="comma-separated subset")
    ap.add_argument("--out", type=Path, help=f"results file (default: results/{bench}_<date>.json)")
    args = ap.parse_args()
    for name in set(queries) - set(args.queries.split(",")):
        del queries[name]
    modes[:] = [m for m in modes if m in args.modes.split(",")]
    return args


def header(bench: str, **facts) -> dict:
    """What every results file starts with: date, machine, the command, the run's facts."""
    return {"date": date.today().isoformat(), "machine": f"{platform.machine()}, "
            f"{os.cpu_count()} cores, {platform.python_version()}", **facts,
            "command": " ".join([f"benchmarks/{bench}.py", *sys.argv[1:]])}


def finish(result: dict, start: float, out: Path | None, table: str) -> None:
    """Write results/<bench>_<date>.json (or ``out``) and print the results and the table."""
    result["wall_s"] = round(time.perf_counter() - start, 1)
    (HERE / "results").mkdir(exist_ok=True)
    bench = Path(result["command"].split()[0]).stem.removesuffix("_bench")
    path = out or HERE / "results" / f"{bench}_{result['date']}.json"
    path.write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))
    print(table)
    print(f"written {path} ({result['wall_s']} s in all)")

if __name__ == "__main__":
    main()
