"""Nexmark throughput: per query, the whole-process wall time of twinflow batch, twinflow stream
and Flink 2.3 on the same generated CSV files.

    .venv/bin/python benchmarks/nexmark/throughput.py --events 1000000 [--queries q0,q5]
        [--contenders batch,stream,flink] [--rows-per-batch 1000000]

Each contender is one process, timed from its start to its exit (JVM start, planning, reading
the CSV files and writing the result included), one after the other (benchmarks/
whole_process.py's ``timed``: wall time and peak memory):

- ``batch``: ``twinflow run --mode batch`` (every output file written);
- ``stream``: ``twinflow run --mode stream --rows-per-batch N`` (default 1,000,000 rows of each
  table per micro-batch);
- ``flink``: PyFlink 2.3, streaming, parallelism 2, the query file as written with its
  blackhole sink (q10: its filesystem sink), CSV sources (flink_nexmark.py), on headerless
  copies of the same files.

Queries neither runs as written (q6, q14, q23) are left out; q12 (processing-time windows) has no
batch run, in twinflow as in Flink. Results: benchmarks/results/nexmark_<events>_<date>.json (or
``--out``), a markdown table and a mermaid chart on stdout (docs/BENCHMARKS.md).

At 10M events the whole set takes hours, so it runs in parts: a run whose ``--out`` file holds
results of the same events, seed, rate and rows per batch keeps the queries it does not run and
replaces those it runs; the table and chart cover them all.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import run as nexmark  # noqa: E402

from benchmarks.whole_process import attempt, machine  # noqa: E402

CONTENDERS = ["batch", "stream", "flink"]
NOT_RUN = {"q6": "invalid (Flink: Column 'rownum' not found)",
           "q14": "needs nexmark's UDF jar (count_char)",
           "q23": "does not parse (A.dateTime unquoted)"}


def headerless(data: Path) -> Path:
    """Copies of the CSV files without their header line, for Flink's csv format."""
    bare = data / "flink"
    bare.mkdir(exist_ok=True)
    for src in nexmark.tables(data).values():
        dst = bare / src.name
        if not dst.exists() or dst.stat().st_mtime < src.stat().st_mtime:
            with open(src, "rb") as fin, open(dst, "wb") as fout:
                fin.readline()
                shutil.copyfileobj(fin, fout, 1 << 24)
    return bare


def command(contender: str, q: str, data: Path, work: Path, rows_per_batch: int) -> list[str]:
    if contender == "flink":
        return [str(nexmark.FLINK_PYTHON), str(HERE / "flink_nexmark.py"), "--query",
                str(HERE / "queries" / f"{q}.sql"), "--data", str(headerless(data)),
                "--work", str(work)]
    out = work / contender
    shutil.rmtree(out, ignore_errors=True)  # no state of a run before
    tables = nexmark.tables(data)
    extra = ["--rows-per-batch", str(rows_per_batch)] if contender == "stream" else []
    return [sys.executable, "-m", "jobs.cli", "run", "--sql", str(nexmark.DDL), "--sql",
            str(nexmark.query_file(q, work / f"{contender}-sink")),
            *[a for t, p in tables.items() if t != "side_input" or q == "q13"
              for a in ("--data", f"{t}={p}")],
            "--mode", contender, "--out", str(out), *extra]


def _keep_report(work: Path, contender: str) -> None:
    """Keep the run's report (twinflow's report.json), drop its outputs and state: at 10M
    events one query's outputs take gigabytes."""
    out = work / ("q10" if contender == "flink" else contender)
    if (out / "report.json").exists():
        shutil.copy(out / "report.json", work / f"{contender}_report.json")
    shutil.rmtree(out, ignore_errors=True)


def markdown(results: list[dict], events: int) -> str:
    lines = ["| query | batch | stream | Flink 2.3 | batch / Flink | stream / Flink | "
             "stream events/s |", "|---|---|---|---|---|---|---|"]
    for r in results:
        s = {c: r.get(c, {}).get("seconds") for c in CONTENDERS}
        cells = [f"{s[c]:.1f} s" if s[c] else r.get(c, {}).get("error", "")[:40]
                 for c in CONTENDERS]
        ratio = [f"{s[c] / s['flink']:.1f} ×" if s[c] and s["flink"] else ""
                 for c in ("batch", "stream")]
        rate = f"{events / s['stream']:,.0f}" if s["stream"] else ""
        lines.append(f"| {r['query']} | {' | '.join(cells)} | {' | '.join(ratio)} | {rate} |")
    return "\n".join(lines)


def chart(results: list[dict], events: int) -> str:
    """A mermaid bar chart of the wall times (seconds; GitHub renders it)."""
    names = [r["query"] for r in results]
    bars = []
    for c in CONTENDERS:
        values = [r.get(c, {}).get("seconds") or 0 for r in results]
        bars.append(f"    bar {json.dumps(values)}")
    top = max((v or 0) for r in results for c in CONTENDERS
              for v in [r.get(c, {}).get("seconds")])
    return "\n".join([
        "```mermaid", "xychart-beta",
        f'    title "Nexmark, {events:,} events: wall time (s), bars: batch, stream, Flink"',
        f"    x-axis {json.dumps(names)}",
        f'    y-axis "seconds" 0 --> {int(top * 1.1) + 1}', *bars, "```"])


def merged(record: dict, out: Path) -> dict:
    """The record with the parts already in ``out`` (same events, seed, rate and rows per batch)
    that this run did not measure; each part keeps its own date, command and machine."""
    same = ("events", "seed", "rate", "rows_per_batch")
    old = json.loads(out.read_text()) if out.exists() else None
    if not old or any(old.get(k) != record[k] for k in same):
        return record
    part = ("date", "command", "machine")
    parts = old.get("parts") or [{k: old[k] for k in part}]
    ran = {r["query"] for r in record["results"]}
    by_query = {r["query"]: r for r in old["results"] if r["query"] not in ran}
    by_query.update({r["query"]: r for r in record["results"]})
    return {**record, "parts": [*parts, {k: record[k] for k in part}],
            "results": [by_query[q] for q in nexmark.QUERIES if q in by_query]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--queries", default=",".join(q for q in nexmark.QUERIES
                                                  if q not in NOT_RUN))
    ap.add_argument("--contenders", default=",".join(CONTENDERS))
    ap.add_argument("--rows-per-batch", type=int, default=1_000_000)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    queries, contenders = args.queries.split(","), args.contenders.split(",")
    if unknown := (set(queries) - set(nexmark.QUERIES)) | (set(contenders) - set(CONTENDERS)):
        ap.error(f"unknown: {sorted(unknown)}")
    if "flink" in contenders and not nexmark.FLINK_PYTHON.exists():
        ap.error(f"no Flink at {nexmark.FLINK_PYTHON} (see ../shared/flink-oracle/README.md)")
    data = nexmark.data_dir(args.events, args.seed, args.rate)
    results = []
    for q in queries:
        work = data / "throughput" / q
        work.mkdir(parents=True, exist_ok=True)
        row: dict = {"query": q}
        for contender in contenders:
            if contender == "batch" and q == nexmark.PROCESSING_TIME:
                row[contender] = {"error": "none (processing time)"}
                continue
            row[contender] = attempt(command(contender, q, data, work, args.rows_per_batch),
                                     work / f"{contender}.log", f"{q} {contender}")
            _keep_report(work, contender)
        results.append(row)
    record = {"date": date.today().isoformat(), "command": " ".join(sys.argv),
              "events": args.events, "seed": args.seed, "rate": args.rate,
              "rows_per_batch": args.rows_per_batch,
              "machine": machine(),
              "results": results}
    out = args.out or ROOT / "benchmarks" / "results" / \
        f"nexmark_{args.events}_{record['date']}.json"
    record = merged(record, out)
    out.write_text(json.dumps(record, indent=2) + "\n")
    results = record["results"]
    print(markdown(results, args.events))
    print(chart(results, args.events))
    return 0


if __name__ == "__main__":
    sys.exit(main())
