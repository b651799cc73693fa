"""Interval and temporal join benchmark: whole-process wall time of twinflow batch and stream
beside Flink 2.3, and the rows the stream keeps in state.

    .venv/bin/python benchmarks/time_joins_bench.py [--rows 1000000] [--skip-flink]
        [--only interval]

Data (benchmarks/data/time_joins_<rows>/, generated once, not committed):
- interval: ``orders`` and ``shipments``, rows/2 each; order i at 1 ms * i (with up to 2 s of
  disorder), its shipment 0-90 s later for 90% of the orders; the query joins a shipment
  within a minute of its order (LEFT: the other orders are padded);
- temporal: ``orders`` (90% of the rows, 1,000 currencies) and ``rates`` (10%: each currency's
  rate changes every ~10 s), LEFT JOIN rates FOR SYSTEM_TIME AS OF the order time.
Watermarks: 5 s of delay (nothing late). Each query runs as its own process, timed from start
to exit (JVM start, CSV reading and writing the result included, on both sides): ``twinflow
run --mode batch`` and ``--mode stream --rows-per-batch <rows>`` (one micro-batch per table),
and PyFlink streaming (benchmarks/flink_query.py, parallelism 2, blackhole sink).

State: a stream of ten micro-batches per table stopped after 3 and after 8, its pages read
back from the checkpoint with Spark's state data source: the rows the join keeps must not
grow with the input. Results are printed and written to
benchmarks/results/time_joins_<date>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
from benchmarks.windows_bench import FLINK_PYTHON, timed  # noqa: E402

DATA = HERE / "data"
WM = "WATERMARK FOR ts AS ts - INTERVAL '5' SECOND"
QUERIES = {
    "interval": {
        "tables": {"orders": "order_id INT, amount INT, ts TIMESTAMP(3)",
                   "shipments": "order_id INT, carrier INT, ts TIMESTAMP(3)"},
        # Flink writes one rowtime attribute to a sink: the other is cast to a plain TIMESTAMP.
        "query": "SELECT o.order_id, o.amount, s.carrier, o.ts, CAST(s.ts AS TIMESTAMP(3)) AS "
                 "shipped FROM orders o "
                 "LEFT JOIN shipments s ON o.order_id = s.order_id AND s.ts BETWEEN o.ts AND "
                 "o.ts + INTERVAL '1' MINUTE",
        "sink": "order_id INT, amount INT, carrier INT, ts TIMESTAMP(3), shipped TIMESTAMP(3)",
        "state": "interval",
    },
    "temporal": {
        "tables": {"orders": "order_id INT, currency INT, amount INT, ts TIMESTAMP(3)",
                   "rates": "currency INT, rate INT, ts TIMESTAMP(3)"},
        "keys": {"rates": "PRIMARY KEY (currency) NOT ENFORCED"},
        "query": "SELECT o.order_id, o.amount * r.rate AS converted, o.ts FROM orders o LEFT "
                 "JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.currency = r.currency",
        "sink": "order_id INT, converted INT, ts TIMESTAMP(3)",
        "state": "temporal",
    },
}


def _times(ms: np.ndarray) -> pd.Series:
    text = pd.to_datetime(ms + 1_704_067_200_000, unit="ms").strftime("%Y-%m-%d %H:%M:%S.%f")
    return text.str[:-3]


def generate(name: str, rows: int) -> dict[str, tuple[Path, Path]]:
    """Per table: the CSV with a header (twinflow) and without (Flink's CSV format)."""
    out = DATA / f"time_joins_{rows}"
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    if name == "interval":
        n = rows // 2
        t = np.arange(n, dtype=np.int64) * 2 + rng.integers(0, 2000, n)
        ship = t + rng.integers(0, 90_000, n)
        frames = {
            "orders": pd.DataFrame({"order_id": np.arange(n), "amount": rng.integers(1, 100, n),
                                    "ts": _times(t)}),
            "shipments": pd.DataFrame({"order_id": np.where(rng.random(n) < 0.9,
                                                            np.arange(n), -1),
                                       "carrier": rng.integers(0, 10, n),
                                       "ts": _times(np.sort(ship))}),
        }
    else:
        n_orders, n_rates = rows * 9 // 10, rows // 10
        span = n_orders * 2
        frames = {
            "orders": pd.DataFrame({
                "order_id": np.arange(n_orders), "currency": rng.integers(0, 1000, n_orders),
                "amount": rng.integers(1, 100, n_orders),
                "ts": _times(np.arange(n_orders, dtype=np.int64) * 2
                             + rng.integers(0, 2000, n_orders))}),
            "rates": pd.DataFrame({
                "currency": rng.integers(0, 1000, n_rates), "rate": rng.integers(1, 200, n_rates),
                "ts": _times(np.sort(rng.integers(0, span, n_rates)))}),
        }
    paths = {}
    for table, df in frames.items():
        path, bare = out / f"{name}_{table}.csv", out / f"{name}_{table}.noheader.csv"
        if not path.exists():
            df.to_csv(path, index=False)
            df.to_csv(bare, index=False, header=False)
        paths[table] = (path, bare)
    return paths


def _ddl(spec: dict, table: str) -> str:
    key = spec.get("keys", {}).get(table)
    return f"CREATE TABLE {table} ({spec['tables'][table]}, {WM}{', ' + key if key else ''})"


def state_rows(checkpoint: Path, var: str) -> int:
    """Rows held in the join's bucket pages at the checkpoint's last committed batch."""
    code = (
        "import sys\n"
        "from operators_lib.engine.spark import get_spark\n"
        "from operators_lib.stream.state_view import StateView\n"
        "spark = get_spark('local[2]', app='state')\n"
        f"df = spark.read.format('statestore').option('stateVarName', '{var}')"
        f".load('{checkpoint}')\n"
        "n = 0\n"
        "for row in df.select('value').collect():\n"
        f"    page = StateView('{var}').loads(row[0][0])\n"
        "    blocks = page['rows'] if 'rows' in page else [page.get('left'), "
        "page.get('versions')]\n"
        "    n += sum(len(b['tw__t']) for b in blocks if b is not None)\n"
        "print(n)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, env={**os.environ, "PYSPARK_PYTHON": sys.executable})
    if proc.returncode != 0:
        raise SystemExit(f"reading the state failed:\n{proc.stderr[-3000:]}")
    return int(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--skip-flink", action="store_true")
    ap.add_argument("--only", help="run only this query (interval or temporal)")
    args = ap.parse_args()
    results = []
    for name, spec in QUERIES.items():
        if args.only and name != args.only:
            continue
        paths = generate(name, args.rows)
        work = DATA / f"time_joins_{args.rows}" / f"{name}_run"
        work.mkdir(parents=True, exist_ok=True)
        (work / "ddl.sql").write_text(";\n".join(_ddl(spec, t) for t in spec["tables"]) + ";\n")
        (work / "q.sql").write_text(spec["query"] + "\n")
        data = [x for t, (p, _) in paths.items() for x in ("--data", f"{t}={p}")]
        base = [sys.executable, "-m", "jobs.cli", "run", "--sql", str(work / "ddl.sql"),
                "--sql", str(work / "q.sql"), *data]
        row: dict = {"query": name}
        largest = max(len(pd.read_csv(p, usecols=[0])) for p, _ in paths.values())
        for mode, extra in (("batch", []), ("stream", ["--rows-per-batch", str(largest)])):
            row[mode] = timed([*base, "--mode", mode, "--out", str(work / f"out_{mode}"),
                               *extra], REPO)
        if not args.skip_flink:
            flink = [str(FLINK_PYTHON), str(HERE / "flink_query.py"), "--sink", spec["sink"],
                     "--query", spec["query"]]
            for t, (_, bare) in paths.items():
                flink += ["--ddl", _ddl(spec, t), "--csv", str(bare)]
            row["flink"] = timed(flink, REPO)
        state = {}
        for stop in (3, 8):
            out = work / "out_state"
            timed([*base, "--mode", "stream", "--rows-per-batch", str(largest // 10),
                   "--stop-after-batches", str(stop), "--out", str(out)], REPO)
            state[f"after_{stop}_batches"] = state_rows(out / "_state" / "checkpoint",
                                                        spec["state"])
            subprocess.run(["rm", "-rf", str(out)], check=True)
        row["state_rows"] = state
        print(" | ".join([name] + [f"{k} {v:.1f} s ({args.rows / v:,.0f} rows/s)"
                                   for k, v in row.items() if isinstance(v, float)]
                         + [f"state rows {state}"]), flush=True)
        results.append(row)
    record = {"date": date.today().isoformat(), "rows": args.rows,
              "machine": f"{platform.machine()}, {os.cpu_count()} cores", "results": results}
    out = HERE / "results" / f"time_joins_{record['date']}.json"
    out.write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
