"""Nexmark on twinflow: nexmark-flink's q0-q23 as written, in both modes, against Flink.

    .venv/bin/python benchmarks/nexmark/run.py --events 50000 --check [--queries q0,q5]
    .venv/bin/python benchmarks/nexmark/run.py --events 50000 --derive    # needs Flink (below)

The queries are nexmark-flink's files (queries/, Apache License 2.0) unchanged; only the DDL is
ours (ddl.sql: three CSV tables in place of the ``datagen`` connector and its views). The data
is generate.py's (deterministic by seed) in benchmarks/data/nexmark/.

``--check`` runs every query with twinflow in one Spark session, batch and stream with parity,
and compares both results with Flink's, committed in expected/e<events>-r<rate>-s<seed>.json.
Flink's results are kept as digests of their sorted rows (values typed by the sink's columns),
not rows: at 50,000 events they are megabytes. A query Flink cannot run as written is recorded with
Flink's error, and twinflow must refuse it too (exit 2). Exit 0 iff every query Flink runs is
equal in both modes and every other one is refused.

``--derive`` asks real Flink (../shared/flink-oracle, streaming mode, a watermark after every
row; batch mode where Flink's streaming changelog is an upsert one, whose final the oracle
cannot apply) for every query's final result and writes that file with the command that made
it.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import generate  # noqa: E402

QUERIES = [f"q{i}" for i in range(24)]
DDL = HERE / "ddl.sql"
DATA = ROOT / "benchmarks" / "data" / "nexmark"
EXPECTED = HERE / "expected"
ORACLE = ROOT.parent / "shared" / "flink-oracle" / "flink_oracle.py"
FLINK_PYTHON = Path.home() / ".cache" / "flink-venv" / "bin" / "python"
SIDE_INPUT = "${FLINK_HOME}/data/side_input.txt"  # q13's side input, nexmark's path
SINK_PATH = "${NEXMARK_DIR}/data/output/${SUBMIT_TIME}"  # q10's filesystem table, nexmark's path
# q12 counts bids in windows of processing time: Flink's result depends on the wall clock (and
# its bounded run ends without firing the open windows, which twinflow fires at the end of
# input), so it is not compared with Flink's but checked for what holds whenever it runs: its
# windows count every bid of every bidder once.
PROCESSING_TIME = "q12"


def data_dir(events: int, seed: int, rate: int, root: Path = DATA) -> Path:
    """The generated tables (made once per size, seed and rate)."""
    path = root / f"e{events}-r{rate}-s{seed}"
    params = {"events": events, "seed": seed, "rate": rate,
              "generator": _digest(HERE / "generate.py")}
    stamp = path / "params.json"
    if not stamp.exists() or json.loads(stamp.read_text()) != params:
        generate.generate(path, events, seed, rate)
        stamp.write_text(json.dumps(params))
    return path


def query_file(q: str, sink: Path) -> Path:
    """Query ``q``'s file as twinflow runs it: q10's filesystem table (its path names
    nexmark's install) written into ``sink``, by a copy of the file beside it."""
    path = HERE / "queries" / f"{q}.sql"
    if SINK_PATH not in path.read_text():
        return path
    sink.parent.mkdir(parents=True, exist_ok=True)
    copy = sink.with_name(f"{sink.name}.{q}.sql")
    copy.write_text(path.read_text().replace(SINK_PATH, str(sink)))
    return copy


def tables(path: Path) -> dict[str, Path]:
    return {t: path / f"{t}.csv" for t in [*generate.SCHEMAS, "side_input"]}


def flink_query(query: Path, data: Path) -> str:
    """The query file as Flink's SQL client would run it, minus its sink: the oracle prints
    the SELECT's rows (positional, as INSERT INTO writes them)."""
    text = query.read_text().replace(SIDE_INPUT, str(data / "side_input.txt"))
    text = re.sub(r"CREATE TABLE nexmark_q\d+\s*\(.*?\)\s*(PARTITIONED BY \([^)]*\)\s*)?"
                  r"WITH\s*\([^;]*?\);", "", text, flags=re.S | re.I)
    return re.sub(r"INSERT INTO nexmark_q\d+", "", text, flags=re.I)


def sink_types(query: str) -> list[str]:
    """The types of the query's sink columns, as twinflow reads the file (or [] if it
    cannot: then Flink cannot run it either, see the expected file)."""
    from operators_lib.errors import TwinflowError
    from operators_lib.sql.script import script_of

    try:
        script = script_of([("ddl.sql", DDL.read_text()),
                            (f"{query}.sql", (HERE / "queries" / f"{query}.sql").read_text())])
    except TwinflowError:
        return []
    return [c.type.sql() for c in script.sink.physical] if script.sink else []


def canonical(rows: list[list[str]], types: list[str]) -> list[tuple]:
    """Typed rows (NULL as Flink's 'NULL' or an empty field), sorted."""
    def value(text: str, kind: str):
        if text in ("", "NULL"):
            return None
        if kind.startswith("DECIMAL"):
            return format(Decimal(text).normalize(), "f")
        if kind in ("BIGINT", "INT", "SMALLINT", "TINYINT"):
            return int(text)
        return text
    return sorted((tuple(value(v, k) for v, k in zip(r, types)) for r in rows), key=repr)


def digest(rows: list[tuple]) -> str:
    h = hashlib.sha256()
    for r in rows:
        h.update(repr(r).encode() + b"\n")
    return h.hexdigest()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def data_digest(path: Path) -> str:
    """The generated tables' sha256: Flink's results hold for the data they were derived from
    (a change to the generator changes the data, and then the check says so)."""
    h = hashlib.sha256()
    for table in tables(path).values():
        with open(table, "rb") as f:
            h.update(hashlib.file_digest(f, "sha256").digest())
    return h.hexdigest()


# ---- Flink's results -------------------------------------------------------------------------

def derive(events: int, seed: int, rate: int, queries: list[str]) -> dict:
    """Run the oracle on every query (one JVM) and digest its final results."""
    if not FLINK_PYTHON.exists() or not ORACLE.exists():
        sys.exit(f"no Flink oracle at {FLINK_PYTHON} / {ORACLE} "
                 "(see ../shared/flink-oracle/README.md)")
    data = data_dir(events, seed, rate)
    work = data / "flink_queries"
    work.mkdir(exist_ok=True)
    (data / "side_input.txt").write_text(
        "".join(line for i, line in enumerate(open(data / "side_input.csv")) if i))
    asked = [q for q in queries if q != PROCESSING_TIME]
    for q in asked:
        (work / f"{q}.sql").write_text(flink_query(HERE / "queries" / f"{q}.sql", data))
    results = _oracle(data, work, asked, "streaming") if asked else {}
    if PROCESSING_TIME in queries:
        results[PROCESSING_TIME] = {"processing_time": True}
    # Where Flink's streaming changelog is an upsert one (+U without -U: q9's TopN), its
    # final result is Flink's batch mode's.
    upserts = [q for q, r in results.items() if r.get("upsert")]
    if upserts:
        results.update({q: {**r, "flink_mode": "batch"}
                        for q, r in _oracle(data, work, upserts, "batch").items()})
    return results


def _oracle(data: Path, work: Path, queries: list[str], mode: str) -> dict[str, dict]:
    args = [str(FLINK_PYTHON), str(ORACLE), "--mode", mode, "--no-changelog",
            "--ddl", str(DDL)]
    args += [a for q in queries for a in ("--query", str(work / f"{q}.sql"))]
    args += [a for t, p in tables(data).items() if t != "side_input"
             for a in ("--data", f"{t}={p}")]
    out = subprocess.run(args, capture_output=True, text=True, cwd=ORACLE.parent)
    results = digests(out.stdout)
    missing = [q for q in queries if q not in results]
    if missing:
        sys.exit(f"the oracle gave no answer for {missing}:\n{out.stderr[-3000:]}")
    return results


def digests(stdout: str) -> dict[str, dict]:
    """The oracle's answers: per query its final rows' count and digest, or its error
    (``upsert``: Flink's changelog was an upsert one, its final not the result)."""
    results = {}
    for q, section in _sections(stdout):
        if section[0].startswith("-- error:"):
            cause = next((s for s in section if s.startswith("-- root cause:")), section[0])
            results[q] = {"flink_error": cause.split(":", 1)[1].strip()[:400]}
            continue
        body = list(csv.reader(ln for ln in section[2:] if not ln.startswith("-- ")))
        warnings = [ln for ln in section if ln.startswith("-- warning")]
        if any("upsert changelog" in w for w in warnings):
            results[q] = {"upsert": True}
            continue
        if warnings:
            sys.exit(f"{q}: the oracle warns: {warnings}")
        results[q] = {"rows": len(body),
                      "sha256": digest(canonical(body, sink_types(q)))}
    return results


def _sections(stdout: str) -> Iterator[tuple[str, list[str]]]:
    """(query, lines after its '### query=' line, '-- final (N)' or '-- error' first)."""
    for block in stdout.split("### query=")[1:]:
        lines = block.splitlines()
        query = lines[0].split(".sql")[0]
        body = [ln for ln in lines[1:] if ln]
        start = next(i for i, ln in enumerate(body) if ln.startswith(("-- final", "-- error")))
        yield query, body[start:]


# ---- twinflow's results ----------------------------------------------------------------------

def check(events: int, seed: int, rate: int, queries: list[str], out: Path) -> int:
    from jobs.console import engine_output_to
    from operators_lib.engine.spark import get_spark

    path = data_dir(events, seed, rate)
    expected, data = load_expected(events, seed, rate, path), tables(path)
    equal = runnable = 0
    failed = False
    with engine_output_to(out / "engine.log") as (console, _):
        spark = get_spark()
        for q in queries:
            t0 = time.perf_counter()
            verdict, ok = check_query(spark, q, data, out / q, expected[q])
            compared = "rows" in expected[q]
            runnable += compared
            equal += ok and compared
            failed |= not ok
            print(f"{q:<4} {verdict}  ({time.perf_counter() - t0:.1f} s)", file=console,
                  flush=True)
        others = [f"{q}: Flink cannot run it as written" for q in queries
                  if "flink_error" in expected[q]] + [
            f"{q}: processing time, checked for consistency" for q in queries
            if "processing_time" in expected[q]]
        print(f"nexmark: {equal}/{runnable} queries equal Flink ({events:,} events, seed "
              f"{seed}{''.join('; ' + o for o in others)})", file=console)
    return 1 if failed else 0


def load_expected(events: int, seed: int, rate: int, data: Path) -> dict:
    """Flink's results for the tables in ``data``; exits if there are none or they were
    derived from other data."""
    path = expected_file(events, seed, rate)
    if not path.exists():
        sys.exit(f"no Flink results for {events} events, seed {seed}, rate {rate}: {path} "
                 "(make it with --derive)")
    record = json.loads(path.read_text())
    if record.get("data_sha256") != data_digest(data):
        sys.exit(f"{path} holds Flink's results for other data than generate.py makes now "
                 f"(data sha256 {record.get('data_sha256')}, now {data_digest(data)}): derive "
                 f"them again with: {record['command']}")
    return record["queries"]


def expected_file(events: int, seed: int, rate: int) -> Path:
    return EXPECTED / f"e{events}-r{rate}-s{seed}.json"


def check_query(spark, q: str, data: dict[str, Path], out: Path, want: dict, runtime=None
                ) -> tuple[str, bool]:
    """Run ``q`` in both modes (``runtime``: stream mode's, stream/runner.py; the tests pass
    the operator harness) and compare with Flink's result: (verdict, equal or refused as
    Flink refuses it)."""
    from operators_lib.errors import TwinflowError
    from operators_lib.runs.lifecycle import run
    from operators_lib.runs.spec import RunSpec
    from operators_lib.stream.runner import SPARK

    sql = [DDL, query_file(q, out.with_name(f"{out.name}-sink"))]
    inputs = {t: p for t, p in data.items() if t != "side_input" or q == "q13"}
    try:
        result = run(RunSpec.bounded_run(sql, inputs, "both", out), spark, runtime=runtime or SPARK)
    except TwinflowError as e:
        return _refused(want, str(e))
    if "processing_time" in want:
        return _every_bid_counted(out, data["bid"], result.exit_code)
    return _compare(q, out, result.exit_code, want)


def _every_bid_counted(out: Path, bid: Path, exit_code: int) -> tuple[str, bool]:
    """q12's stream result: per bidder, its windows' counts add up to its bids in the input."""
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    bids = pacsv.read_csv(bid).group_by("bidder").aggregate([("bidder", "count")])
    want = dict(zip(bids["bidder"].to_pylist(), bids["bidder_count"].to_pylist()))
    rows = pacsv.read_csv(out / "stream.csv")
    counted = rows.group_by("bidder").aggregate([("bid_count", "sum")])
    got = dict(zip(counted["bidder"].to_pylist(), counted["bid_count_sum"].to_pylist()))
    windows = len(pc.unique(rows["starttime"]))
    if exit_code == 0 and got == want:
        return f"counted  {rows.num_rows:>7,} rows: {windows} processing-time windows count " \
               f"each of {sum(want.values()):,} bids once (not compared with Flink: " \
               "processing time)", True
    return f"WRONG: windows count {sum(got.values()):,} bids of {len(got):,} bidders, the " \
           f"input has {sum(want.values()):,} of {len(want):,} (exit {exit_code})", False


def _compare(q: str, out: Path, exit_code: int, want: dict) -> tuple[str, bool]:
    if "flink_error" in want:
        return f"WRONG: twinflow ran it (exit {exit_code}); Flink cannot: " \
               f"{want['flink_error']}", False
    report = json.loads((out / "report.json").read_text())
    types = [c["type"] for c in report["columns"]]
    got = {}
    for mode in ("stream", "batch"):
        if (out / f"{mode}.csv").exists():
            rows = list(csv.reader(open(out / f"{mode}.csv", newline="")))
            got[mode] = (len(rows) - 1, digest(canonical(rows[1:], types)))
    same = [m for m in got if got[m][1] == want["sha256"]]
    if exit_code == 0 and len(same) == len(got):
        mode = "" if want.get("flink_mode") != "batch" else \
            " (Flink's batch mode: its stream's changelog is an upsert one)"
        return f"equal    {want['rows']:>7,} rows, {' = '.join(got)} = Flink{mode}", True
    parts = ", ".join(f"{m} {got[m][0]:,} rows" for m in got if m not in same)
    return f"DIFFERENT: {parts}, Flink {want['rows']:,} rows (exit {exit_code}, parity: " \
           f"{report.get('parity', {}).get('verdict')})", False


def _refused(want: dict, message: str) -> tuple[str, bool]:
    if "flink_error" in want:
        return f"refused  as Flink refuses it ({want['flink_error']}); twinflow: {message}", True
    return f"NOT RUN: twinflow cannot run it yet: {message}", False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--events", type=int, default=50_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rate", type=int, default=1000, help="events per second of event time")
    ap.add_argument("--queries", default=",".join(QUERIES), help="comma-separated, e.g. q0,q5")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "nexmark")
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="compare twinflow with Flink")
    mode.add_argument("--derive", action="store_true", help="write Flink's results")
    args = ap.parse_args()
    queries = [q.strip() for q in args.queries.split(",") if q.strip()]
    unknown = [q for q in queries if q not in QUERIES]
    if unknown:
        ap.error(f"unknown queries {unknown} (q0..q23)")
    if args.check:
        return check(args.events, args.seed, args.rate, queries, args.out)
    path = expected_file(args.events, args.seed, args.rate)
    data = data_digest(data_dir(args.events, args.seed, args.rate))
    old = json.loads(path.read_text()) if path.exists() else {}
    kept = old["queries"] if old.get("data_sha256") == data else {}  # of other data: stale
    results = {**kept, **derive(args.events, args.seed, args.rate, queries)}
    EXPECTED.mkdir(exist_ok=True)
    path.write_text(json.dumps({
        "command": f".venv/bin/python benchmarks/nexmark/run.py --events {args.events} "
                   f"--rate {args.rate} --seed {args.seed} --derive",
        "flink": "2.3.0 (../shared/flink-oracle, streaming, a watermark after every row)",
        "data_sha256": data,
        "queries": dict(sorted(results.items(), key=lambda kv: int(kv[0][1:])))},
        indent=1) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
