"""Time-window benchmark: whole-process wall time of twinflow batch and stream beside Flink 2.3.

    .venv/bin/python benchmarks/windows_bench.py [--rows 1000000] [--users 1000] [--skip-flink]
        [--only SESSION]

Data: benchmarks/data/windows_<rows>_<users>.csv (generated once, not committed): user_id =
one of ``users``, v INT, ts increasing by 6 ms per row with up to 2 s of disorder (a 5 s
watermark delay: nothing late). Each query runs as its own process, timed from start to exit
(JVM start, CSV reading and writing the result included, on both sides): ``twinflow run
--mode batch`` and ``--mode stream --rows-per-batch <rows>`` (one micro-batch), and PyFlink
streaming (benchmarks/flink_query.py, parallelism 2, blackhole sink). Results are printed and
written to benchmarks/results/windows_<date>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DATA = HERE / "data"
FLINK_PYTHON = Path(os.environ.get("FLINK_PYTHON", Path.home() / ".cache" / "flink-venv" /
                                   "bin" / "python"))
COLUMNS = "user_id INT, v INT, ts TIMESTAMP(3)"
WATERMARK = "WATERMARK FOR ts AS ts - INTERVAL '5' SECOND"
QUERIES = {
    "TUMBLE 1 min, COUNT per user": (
        "SELECT user_id, window_start, COUNT(*) AS c FROM TABLE(TUMBLE(TABLE events, "
        "DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY user_id, window_start, window_end",
        "user_id INT, window_start TIMESTAMP(3), c BIGINT"),
    "HOP 10 s / 1 min, COUNT per user": (
        "SELECT user_id, window_start, COUNT(*) AS c FROM TABLE(HOP(TABLE events, "
        "DESCRIPTOR(ts), INTERVAL '10' SECOND, INTERVAL '1' MINUTE)) "
        "GROUP BY user_id, window_start, window_end",
        "user_id INT, window_start TIMESTAMP(3), c BIGINT"),
    "SESSION 30 s, COUNT per user": (
        "SELECT user_id, window_start, COUNT(*) AS c FROM TABLE(SESSION(TABLE events "
        "PARTITION BY user_id, DESCRIPTOR(ts), INTERVAL '30' SECOND)) "
        "GROUP BY user_id, window_start, window_end",
        "user_id INT, window_start TIMESTAMP(3), c BIGINT"),
}


def generate(rows: int, users: int) -> tuple[Path, Path]:
    """The CSV with a header (twinflow) and without (Flink's CSV format cannot skip one)."""
    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"windows_{rows}_{users}.csv"
    bare = DATA / f"windows_{rows}_{users}.noheader.csv"
    if not path.exists() or not bare.exists():
        rng = np.random.default_rng(42)
        ms = np.arange(rows, dtype=np.int64) * 6 + rng.integers(0, 2000, rows)
        ts = pd.to_datetime(ms + 1_704_067_200_000, unit="ms").strftime("%Y-%m-%d %H:%M:%S.%f")
        df = pd.DataFrame({"user_id": rng.integers(0, users, rows),
                           "v": rng.integers(0, 100, rows), "ts": ts.str[:-3]})
        df.to_csv(path, index=False)
        df.to_csv(bare, index=False, header=False)
    return path, bare


def timed(cmd: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--users", type=int, default=1000)
    ap.add_argument("--skip-flink", action="store_true")
    ap.add_argument("--only", help="run only the queries whose name starts with this")
    args = ap.parse_args()
    csv, bare = generate(args.rows, args.users)
    work = DATA / "windows_runs"
    work.mkdir(parents=True, exist_ok=True)
    (work / "ddl.sql").write_text(f"CREATE TABLE events ({COLUMNS}, {WATERMARK});\n")
    results = []
    for name, (query, sink) in QUERIES.items():
        if args.only and not name.startswith(args.only):
            continue
        (work / "q.sql").write_text(query + "\n")
        row = {"query": name}
        for mode, extra in (("batch", []), ("stream", ["--rows-per-batch", str(args.rows)])):
            out = work / f"out_{mode}"
            row[mode] = timed([sys.executable, "-m", "jobs.cli", "run", "--sql",
                               str(work / "ddl.sql"), "--sql", str(work / "q.sql"), "--data",
                               f"events={csv}", "--mode", mode, "--out", str(out), *extra], REPO)
        if not args.skip_flink:
            row["flink"] = timed([str(FLINK_PYTHON), str(HERE / "flink_query.py"), "--csv",
                                  str(bare), "--ddl", f"CREATE TABLE events ({COLUMNS}, "
                                  f"{WATERMARK})", "--sink", sink, "--query", query], REPO)
        print(" | ".join([name] + [f"{k} {v:.1f} s ({args.rows / v:,.0f} rows/s)"
                                   for k, v in row.items() if k != "query"]), flush=True)
        results.append(row)
    record = {"date": date.today().isoformat(), "rows": args.rows, "users": args.users,
              "machine": f"{platform.machine()}, {os.cpu_count()} cores", "results": results}
    out = HERE / "results" / f"windows_{record['date']}.json"
    out.write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
