"""Run one Nexmark query file on PyFlink 2.3 as written (its sink, blackhole but q10's, and its
INSERT INTO), over the CSV tables: streaming, parallelism 2.

Run with the Flink venv's python (../shared/flink-oracle/README.md); prints one JSON line. The
tables are ddl.sql's with Flink's filesystem connector on headerless copies of the CSV files.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def statements(text: str) -> list[str]:
    """``;``-separated statements, comments dropped (the files have no ``;`` in strings)."""
    text = re.sub(r"--[^\n]*", "", text)
    return [s.strip() for s in text.split(";") if s.strip()]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--query", type=Path, required=True)
    ap.add_argument("--data", type=Path, required=True, help="dir of headerless <table>.csv")
    ap.add_argument("--work", type=Path, required=True, help="q10's output, q13's side input")
    ap.add_argument("--parallelism", type=int, default=2)
    args = ap.parse_args()
    from pyflink.table import EnvironmentSettings, TableEnvironment

    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("parallelism.default", str(args.parallelism))
    for ddl in statements((HERE / "ddl.sql").read_text()):
        table = re.match(r"CREATE TABLE (\w+)", ddl).group(1)
        env.execute_sql(ddl + f" WITH ('connector'='filesystem', "
                              f"'path'='{args.data / (table + '.csv')}', 'format'='csv')")
    text = args.query.read_text().replace(
        "${FLINK_HOME}/data/side_input.txt", str(args.data / "side_input.csv")).replace(
        "${NEXMARK_DIR}/data/output/${SUBMIT_TIME}", str(args.work / "q10"))
    *setup, insert = statements(text)
    for stmt in setup:
        env.execute_sql(stmt)
    t0 = time.perf_counter()
    env.execute_sql(insert).wait()
    print(json.dumps({"seconds": round(time.perf_counter() - t0, 2)}))


if __name__ == "__main__":
    main()
