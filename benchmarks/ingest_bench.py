"""CSV ingest on the executors (ingest.parse + ingest.stage): rows/s and the driver's memory.

    .venv/bin/python benchmarks/ingest_bench.py [--rows 1000000] [--files 1]

Writes a CSV of ``--rows`` rows (k STRING, ts TIMESTAMP(3), v DOUBLE, n INT) split into
``--files`` files, warms the JVM on a small file, then times parsing and staging (100,000-row
micro-batch files) in one process, local[2]. The driver Python's peak resident memory is read
from the kernel (ru_maxrss), so it covers the process' whole life.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
DATA = REPO / "benchmarks" / "data" / "ingest"


def write_csv(rows: int, files: int) -> Path:
    out = DATA / f"csv_{rows}_{files}"
    if out.exists():
        return out
    out.mkdir(parents=True)
    rng = np.random.default_rng(7)
    ts = pd.Timestamp("2024-01-01") + pd.to_timedelta(np.arange(rows) * 10, unit="ms")
    df = pd.DataFrame({"k": [f"key{i}" for i in rng.integers(0, 10_000, rows)],
                       "ts": ts.strftime("%Y-%m-%d %H:%M:%S.%f").str[:23],
                       "v": rng.random(rows).round(6), "n": rng.integers(0, 1000, rows)})
    for i, part in enumerate(np.array_split(df, files)):
        part.to_csv(out / f"part-{i:03d}.csv", index=False)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--files", type=int, default=1)
    args = ap.parse_args()
    from operators_lib.engine.spark import get_spark
    from operators_lib.io import ingest
    from operators_lib.sql import load_script

    src = write_csv(args.rows, args.files)
    small = write_csv(1000, 1)
    work = DATA / "work"
    sql = DATA / "ddl.sql"
    sql.write_text("CREATE TABLE t (k STRING, ts TIMESTAMP(3), v DOUBLE, n INT, "
                   "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND);\nSELECT * FROM t")
    table = load_script([sql]).catalog.tables["t"]
    spark = get_spark("local[2]", app="ingest-bench")
    result = {}
    for path in (small, src):  # the first warms the JVM and the Python workers
        shutil.rmtree(work, ignore_errors=True)
        t0 = time.perf_counter()
        files = sorted(path.glob("*.csv")) if path.is_dir() else [path]
        parsed = ingest.parse(spark, {"t": ingest.TableInput(table, files)}, work / "parsed")
        t1 = time.perf_counter()
        files = ingest.stage(spark, parsed, "t", work / "staged", 100_000)
        t2 = time.perf_counter()
        result = {"rows": parsed.rows("t"), "files": args.files, "pieces": len(parsed.pieces),
                  "parse_s": round(t1 - t0, 2), "stage_s": round(t2 - t1, 2),
                  "rows_per_s": round(parsed.rows("t") / (t2 - t0)),
                  "micro_batch_files": len(files)}
    result["driver_python_peak_mb"] = round(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
