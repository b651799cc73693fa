"""Run one OVER query on PyFlink (streaming, parallelism 2, CSV source, blackhole sink).

Run with the Flink venv's python (see ../shared/flink-oracle/README.md); prints one JSON line.
Timed from job submission to job end: JVM start-up and planning of the session are excluded.
"""

from __future__ import annotations

import argparse
import json
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", required=True)
    ap.add_argument("--ddl", required=True)
    ap.add_argument("--query", required=True)
    ap.add_argument("--parallelism", type=int, default=2)
    args = ap.parse_args()
    from pyflink.table import EnvironmentSettings, TableEnvironment

    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("parallelism.default", str(args.parallelism))
    env.execute_sql(args.ddl + f" WITH ('connector'='filesystem', 'path'='{args.csv}', "
                               "'format'='csv')")
    env.execute_sql("CREATE TABLE sink (k INT, v DOUBLE, ts TIMESTAMP(3), m DOUBLE) "
                    "WITH ('connector'='blackhole')")
    rows = sum(1 for _ in open(args.csv))
    # warm-up on the same plan is not possible for a bounded source; time one run
    t0 = time.perf_counter()
    env.execute_sql(f"INSERT INTO sink {args.query}").wait()
    secs = time.perf_counter() - t0
    print(json.dumps({"rows": rows, "seconds": round(secs, 2), "rows_per_s": int(rows / secs)}))


if __name__ == "__main__":
    main()
