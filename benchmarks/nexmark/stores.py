"""Nexmark's input on an object store: per query, ``twinflow run``'s whole-process wall time and
its ingest seconds (report.json's ``timings_s``) with the same generated tables read from

- ``local-csv``: the local disk, CSV (as benchmarks/nexmark/throughput.py runs them);
- ``s3-csv``: the loopback S3 server (tests/object_store.py: moto's stand-alone server), the
  same CSV files;
- ``s3-parquet``: the S3 server, the tables as Parquet files typed as ddl.sql declares them
  (converted once with pyarrow, uploaded beside the CSV ones),

one process at a time, its outputs on the local disk; Flink 2.3 beside on the local CSV files
(flink_nexmark.py, as throughput.py runs it).

    .venv/bin/python benchmarks/nexmark/stores.py --events 1000000 [--queries q0,q5,q8]
        [--mode batch|stream]

Results: benchmarks/results/nexmark_stores_<events>_<date>.json (or ``--out``) and a markdown
table on stdout (docs/BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from datetime import date
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import run as nexmark  # noqa: E402
from generate import SCHEMAS  # noqa: E402
from throughput import headerless  # noqa: E402

from benchmarks.whole_process import attempt, machine  # noqa: E402

INPUTS = ["local-csv", "s3-csv", "s3-parquet"]
# ddl.sql's types (BIGINT, VARCHAR, TIMESTAMP(3)) as Arrow's
_TIMES, _NUMBERS = {"dateTime", "expires"}, {"id", "initialBid", "reserve", "seller",
                                             "category", "auction", "bidder", "price"}


def _arrow_type(column: str) -> pa.DataType:
    if column in _TIMES:
        return pa.timestamp("ms")
    return pa.int64() if column in _NUMBERS else pa.string()


def parquet_copy(csv_file: Path, table: str) -> Path:
    """The table as one Parquet file typed as ddl.sql (made once beside the CSV file)."""
    target = csv_file.with_suffix(".parquet")
    if not target.exists() or target.stat().st_mtime < csv_file.stat().st_mtime:
        types = {c: _arrow_type(c) for c in SCHEMAS[table]}
        data = pacsv.read_csv(csv_file, convert_options=pacsv.ConvertOptions(
            column_types=types))  # (Arrow's ISO 8601 parser reads "2026-01-01 10:00:00.123")
        pq.write_table(data, target)
    return target


def upload(s3, files: dict[str, Path], prefix: str) -> dict[str, str]:
    """Each file to ``s3a://nexmark/<prefix>/<name>``; returns table -> URI."""
    fs = s3.store().filesystem()
    uris = {}
    for table, path in files.items():
        with open(path, "rb") as src, fs.open_output_stream(
                f"nexmark/{prefix}/{path.name}") as out:
            shutil.copyfileobj(src, out, 1 << 24)
        uris[table] = f"s3a://nexmark/{prefix}/{path.name}"
    return uris


def command(q: str, data: dict[str, Path | str], mode: str, out: Path,
            conf: dict[str, str]) -> list[str]:
    shutil.rmtree(out, ignore_errors=True)
    return [sys.executable, "-m", "jobs.cli", "run", "--sql", str(nexmark.DDL), "--sql",
            str(nexmark.query_file(q, out.with_name(f"{out.name}-sink"))),
            *[a for t, p in data.items() if t != "side_input" or q == "q13"
              for a in ("--data", f"{t}={p}")],
            "--mode", mode, "--out", str(out),
            *[a for k, v in conf.items() for a in ("--conf", f"spark.hadoop.{k}={v}")]]


def markdown(results: list[dict]) -> str:
    lines = ["| query | local CSV | S3 CSV | S3 Parquet | Flink 2.3 (local CSV) |",
             "|---|---|---|---|---|"]
    for r in results:
        cells = []
        for name in INPUTS:
            got = r.get(name, {})
            cells.append(f"{got['seconds']:.1f} s (ingest {got['ingest_s']:.1f} s)"
                         if "seconds" in got else got.get("error", "")[:40])
        flink = r.get("flink", {})
        cells.append(f"{flink['seconds']:.1f} s" if "seconds" in flink else "")
        lines.append(f"| {r['query']} | {' | '.join(cells)} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--queries", default="q0,q5,q8")
    ap.add_argument("--mode", choices=["batch", "stream"], default="batch")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    from tests.object_store import S3Server

    data = nexmark.data_dir(args.events, args.seed, args.rate)
    local = nexmark.tables(data)
    parquet = {t: parquet_copy(p, t) if t in SCHEMAS else p for t, p in local.items()}
    results = []
    with S3Server() as s3:
        s3.bucket("nexmark")
        inputs = {"local-csv": dict(local), "s3-csv": upload(s3, local, "csv"),
                  "s3-parquet": upload(s3, parquet, "parquet")}
        for q in args.queries.split(","):
            work = data / "stores" / q
            work.mkdir(parents=True, exist_ok=True)
            row: dict = {"query": q}
            for name in INPUTS:
                out = work / name
                got = attempt(command(q, inputs[name], args.mode, out, s3.hadoop_conf()),
                              work / f"{name}.log", f"{q} {name}")
                if "seconds" in got:
                    got["ingest_s"] = json.loads((out / "report.json").read_text())[
                        "timings_s"]["ingest"]
                shutil.rmtree(out, ignore_errors=True)
                row[name] = got
            if nexmark.FLINK_PYTHON.exists():
                row["flink"] = attempt(
                    [str(nexmark.FLINK_PYTHON), str(HERE / "flink_nexmark.py"), "--query",
                     str(HERE / "queries" / f"{q}.sql"), "--data", str(headerless(data)),
                     "--work", str(work)], work / "flink.log", f"{q} flink")
            results.append(row)
    record = {"date": date.today().isoformat(), "command": " ".join(sys.argv),
              "events": args.events, "seed": args.seed, "rate": args.rate, "mode": args.mode,
              "machine": machine(), "results": results}
    out = args.out or ROOT / "benchmarks" / "results" / \
        f"nexmark_stores_{args.events}_{record['date']}.json"
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
