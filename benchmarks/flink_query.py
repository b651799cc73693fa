"""Run one query on PyFlink (streaming, parallelism 2, CSV sources, blackhole sink).

Run with the Flink venv's python (see ../shared/flink-oracle/README.md); prints one JSON line.
``--ddl``/``--csv`` are given once per source table, in the same order. Timed from job
submission to job end: JVM start-up and planning of the session are excluded.
"""

from __future__ import annotations

import argparse
import json
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", action="append", required=True, help="headerless CSV, per table")
    ap.add_argument("--ddl", action="append", required=True, help="CREATE TABLE, per table")
    ap.add_argument("--sink", required=True, help="sink columns, e.g. 'a BIGINT, b DOUBLE'")
    ap.add_argument("--query", required=True)
    ap.add_argument("--parallelism", type=int, default=2)
    args = ap.parse_args()
    if len(args.csv) != len(args.ddl):
        ap.error("give one --csv per --ddl")
    from pyflink.table import EnvironmentSettings, TableEnvironment

    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("parallelism.default", str(args.parallelism))
    for ddl, csv in zip(args.ddl, args.csv):
        env.execute_sql(ddl + f" WITH ('connector'='filesystem', 'path'='{csv}', "
                              "'format'='csv')")
    # blackhole accepts every changelog kind (the LEFT JOIN's retractions included)
    env.execute_sql(f"CREATE TABLE sink ({args.sink}) WITH ('connector'='blackhole')")
    rows = sum(sum(1 for _ in open(csv)) for csv in args.csv)
    t0 = time.perf_counter()
    env.execute_sql(f"INSERT INTO sink {args.query}").wait()
    secs = time.perf_counter() - t0
    print(json.dumps({"rows": rows, "seconds": round(secs, 2), "rows_per_s": int(rows / secs)}))


if __name__ == "__main__":
    main()
