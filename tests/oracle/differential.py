"""Randomized differential test: twinflow vs real Apache Flink on random OVER or time-window
queries and data.

    .venv/bin/python tests/oracle/differential.py [--family over|windows] [--iterations 20]
        [--seed 1] [--keep DIR]

Each iteration draws a table (partition key with NULLs, INT and DOUBLE values with NULLs,
timestamps with ties and disorder, a random watermark delay), a window (ROWS or RANGE, bounded
or unbounded, with or without PARTITION BY) and a set of aggregates; runs it on Flink through
the oracle (a watermark after every row) and on twinflow (one row per micro-batch, both modes);
then requires Flink's changelog (up to the order of equal-time rows of different partitions),
Flink's streaming final and Flink's batch final. One exception, by design: Flink's batch mode
orders ROWS peers (equal times in a partition) arbitrarily, twinflow by arrival in both modes
(as Flink's streaming mode does); when the batch result differs only there, it must equal
Flink's streaming result with --watermarks end-only (nothing late), and the line says so.
``--family windows`` draws a TUMBLE / HOP / SESSION (group window or TVF) or CUMULATE (TVF) window,
with or without offset and key, and aggregates (DISTINCT included) over the same kind of table.
``--family timejoins`` draws an interval join (INNER / LEFT / RIGHT / FULL, BETWEEN or
comparisons, with or without a key and a residual) or an event-time temporal join (INNER /
LEFT, a PRIMARY KEY table or a latest-row view, with or without a residual) over two tables in
time order (nothing late: Flink's late-row handling races its two sources); finals only.
Not part of CI: it needs the Flink venv and takes ~1 min per iteration. A failing case is kept
(ddl.sql, query.sql, t.csv, twinflow's output) in --keep, to be added to the corpus.

``--family sql`` is the SQL fuzzer (fuzz.py, sqlgen.py): ``--iterations`` rounds of
``--queries`` random queries over two random tables, Flink's answers in one JVM per round,
twinflow's in both modes in this process; it prints the verdicts per grammar rule. A failing
query is shrunk (parts left out while it still fails) and kept in --keep as a case. ``--record
FILE`` writes the rounds with Flink's answers: the slice CI replays (tests/test_sql_fuzz.py).
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.caselib import (  # noqa: E402
    Case,
    as_multiset,
    canonical_changelog,
    column_types,
    normalize,
    read_csv,
)
from tests.oracle import fuzz  # noqa: E402
from tests.oracle.regen_expected import blocks, oracle, regen  # noqa: E402
from tests.oracle.sqlgen import Query, shrinks  # noqa: E402

AGGS = ["COUNT(*)", "COUNT(v)", "SUM(v)", "AVG(v)", "MIN(v)", "MAX(v)", "SUM(d)", "AVG(d)",
        "MIN(d)", "MAX(d)"]


def random_table(rng: random.Random, where: Path, rows_max: int = 14) -> None:
    delay = rng.choice([0, 1, 2, 5])
    (where / "ddl.sql").write_text(
        "CREATE TABLE t (\n  k STRING,\n  v INT,\n  d DOUBLE,\n  ts TIMESTAMP(3),\n"
        f"  WATERMARK FOR ts AS ts - INTERVAL '{delay}' SECOND\n);\n")
    rows, t = [], 0
    for _ in range(rng.randint(3, rows_max)):
        t = max(0, t + rng.choice([-3, -1, 0, 0, 1, 1, 2, 3]))
        k = rng.choice(["a", "b", "c", ""])
        v = "" if rng.random() < 0.2 else str(rng.randint(-20, 20))
        d = "" if rng.random() < 0.2 else f"{rng.uniform(-10, 10):.2f}"
        rows.append(f"{k},{v},{d},2024-01-01 00:{t // 60:02d}:{t % 60:02d}")
    (where / "t.csv").write_text("k,v,d,ts\n" + "\n".join(rows) + "\n")


def random_window_case(rng: random.Random, where: Path) -> None:
    random_table(rng, where, rows_max=24)
    kind = rng.choice(["TUMBLE", "HOP", "CUMULATE", "SESSION"])
    step = rng.randint(1, 4)
    size = step * rng.randint(2, 4) if kind in ("HOP", "CUMULATE") else step
    sec = "INTERVAL '{}' SECOND".format
    offset = f", {sec(rng.randint(1, size - 1))}" if size > 1 and kind != "SESSION" and \
        rng.random() < 0.3 else ""
    keyed = rng.random() < 0.7
    aggs = rng.sample(AGGS + ["COUNT(DISTINCT v)", "SUM(DISTINCT v)"], rng.randint(1, 4))
    items = "".join(f",\n  {a} AS a{i}" for i, a in enumerate(aggs))
    key, group_key = ("k, ", ", k") if keyed else ("", "")
    args = sec(size) if kind in ("TUMBLE", "SESSION") else f"{sec(step)}, {sec(size)}"
    table = "TABLE t PARTITION BY k" if keyed and kind == "SESSION" else "TABLE t"
    if kind != "CUMULATE" and not offset and rng.random() < 0.5:  # a group window
        query = (f"SELECT {key}{kind}_START(ts, {args}) AS ws, {kind}_END(ts, {args}) AS we"
                 f"{items}\nFROM t\nGROUP BY {kind}(ts, {args}){group_key}\n")
    else:
        query = (f"SELECT {key}window_start AS ws, window_end AS we{items}\n"
                 f"FROM TABLE({kind}({table}, DESCRIPTOR(ts), {args}{offset}))\n"
                 f"GROUP BY window_start, window_end{group_key}\n")
    (where / "query.sql").write_text(query)
    ties = {"time": "we", "key": ["k"] if keyed else []}
    (where / "case.json").write_text(json.dumps({"changelog_ties": ties}))


def random_case(rng: random.Random, where: Path) -> None:
    random_table(rng, where)
    kind = rng.choice(["ROWS", "RANGE"])
    if rng.random() < 0.4:
        start = "UNBOUNDED"
    elif kind == "ROWS":
        start = str(rng.randint(0, 3))
    else:
        start = f"INTERVAL '{rng.randint(1, 4)}' SECOND"
    part = "PARTITION BY k " if rng.random() < 0.75 else ""
    aggs = rng.sample(AGGS, rng.randint(1, 4))
    items = ",\n  ".join(f"{a} OVER w AS a{i}" for i, a in enumerate(aggs))
    (where / "query.sql").write_text(
        f"SELECT k, v, d, ts,\n  {items}\nFROM t\nWINDOW w AS ({part}ORDER BY ts "
        f"{kind} BETWEEN {start} PRECEDING AND CURRENT ROW)\n")
    (where / "case.json").write_text('{"changelog_ties": {"time": "ts", "key": ["k"]}}')


def _timed_rows(rng: random.Random, n: int, row) -> list[str]:
    """``n`` rows in time order (ties allowed), ``row(t)`` each."""
    t, out = 0, []
    for _ in range(n):
        t += rng.choice([0, 1, 1, 2, 3])
        out.append(row(t))
    return out


def _ts(t: int) -> str:
    return f"2024-01-01 00:{t // 60:02d}:{t % 60:02d}"


def random_time_join_case(rng: random.Random, where: Path) -> None:
    delay = rng.choice([1, 2, 5])
    keys = ["a", "b", "c", ""]
    temporal = rng.random() < 0.5
    left = _timed_rows(rng, rng.randint(3, 12), lambda t: (
        f"{rng.randint(1, 99)},{rng.choice(keys)},"
        f"{'' if rng.random() < 0.15 else rng.randint(-5, 20)},{_ts(t)}"))
    right = _timed_rows(rng, rng.randint(2, 10), lambda t: (
        f"{rng.choice(keys)},{'' if rng.random() < 0.15 else rng.randint(-5, 20)},{_ts(t)}"))
    wm = f"WATERMARK FOR {{}} AS {{}} - INTERVAL '{delay}' SECOND"
    pk = ",\n  PRIMARY KEY (k) NOT ENFORCED" if temporal and rng.random() < 0.5 else ""
    ddl = (f"CREATE TABLE l (\n  id INT,\n  k STRING,\n  v INT,\n  ts TIMESTAMP(3),\n  "
           f"{wm.format('ts', 'ts')}\n);\n"
           f"CREATE TABLE r (\n  k STRING,\n  w INT,\n  rt TIMESTAMP(3),\n  "
           f"{wm.format('rt', 'rt')}{pk}\n);\n")
    residual = " AND l.v > r.w" if rng.random() < 0.3 else ""
    if temporal:
        versioned = "r"
        if not pk:
            versioned = "rv"
            ddl += ("CREATE VIEW rv AS\nSELECT k, w, rt FROM (\n  SELECT *, ROW_NUMBER() OVER "
                    "(PARTITION BY k ORDER BY rt DESC) AS rownum FROM r)\nWHERE rownum = 1;\n")
        kind = rng.choice(["JOIN", "LEFT JOIN"])
        query = (f"SELECT l.id, l.k, l.v, l.ts, r.w, r.rt\nFROM l\n{kind} {versioned} FOR "
                 f"SYSTEM_TIME AS OF l.ts AS r\nON l.k = r.k{residual}\n")
    else:
        lo, hi = sorted(rng.sample(range(-4, 5), 2))
        bound = "r.rt {} INTERVAL '{}' SECOND".format
        low = bound("-" if lo < 0 else "+", abs(lo))
        high = bound("-" if hi < 0 else "+", abs(hi))
        if rng.random() < 0.5:
            cond = f"l.ts BETWEEN {low} AND {high}"
        else:
            cond = f"l.ts {rng.choice(['>=', '>'])} {low} AND l.ts {rng.choice(['<=', '<'])} {high}"
        key = "l.k = r.k AND " if rng.random() < 0.8 else ""
        kind = rng.choice(["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"])
        query = (f"SELECT l.id, l.k, l.v, l.ts, r.k AS rk, r.w, r.rt\nFROM l\n{kind} r\n"
                 f"ON {key}{cond}{residual}\n")
    (where / "ddl.sql").write_text(ddl)
    (where / "l.csv").write_text("id,k,v,ts\n" + "\n".join(left) + "\n")
    (where / "r.csv").write_text("k,w,rt\n" + "\n".join(right) + "\n")
    (where / "query.sql").write_text(query)
    (where / "case.json").write_text(json.dumps({"final_only": "two sources"}))


def _rows_peers(case: Case) -> bool:
    """A ROWS frame over a partition that has two rows with the same time."""
    if " ROWS BETWEEN" not in (case.dir / "query.sql").read_text():
        return False
    rows = read_csv(case.dir / "t.csv")[1:]
    keys = [(r[0], r[3]) for r in rows]
    return len(keys) != len(set(keys))


def check(spark, case: Case, out: Path) -> tuple[list[str], list[str]]:
    result = case.run(spark, out, "both", rows_per_batch=1)
    problems = [] if result.exit_code == 0 else [f"exit {result.exit_code}: {result.message}"]
    notes = []
    types = column_types(out)
    pairs = (("changelog.csv", "changelog.csv", True), ("stream.csv", "stream_final.csv", False),
             ("batch.csv", "batch_final.csv", False))
    if case.meta.get("final_only"):
        pairs = pairs[1:]
    for ours, theirs, ordered in pairs:
        h1, a = normalize(read_csv(out / ours), types)
        h2, b = normalize(case.expected(theirs), types)
        ties = case.meta.get("changelog_ties")
        same = (canonical_changelog(h1, a, ties) == canonical_changelog(h2, b, ties)) if ordered \
            else as_multiset(a) == as_multiset(b)
        if not same and ours == "batch.csv" and "OVER w" in (case.dir / "query.sql").read_text() \
                and _rows_peers(case):
            lines, _ = oracle(case.dir, "--mode", "streaming", "--watermarks", "end-only")
            _, c = normalize(list(csv.reader(blocks(lines)[("streaming", "final")])), types)
            same = as_multiset(a) == as_multiset(c)
            if same:
                notes.append("batch: Flink batch ordered ROWS peers otherwise; equals Flink "
                             "streaming end-only")
        if not same:
            problems.append(f"{ours} differs from Flink's {theirs}")
    return problems, notes


FAMILIES = {"over": random_case, "windows": random_window_case,
            "timejoins": random_time_join_case}


def shrink(spark, rnd: fuzz.Round, query: Query, work: Path) -> tuple[str, fuzz.Verdict]:
    """The smallest variant of a failing ``query`` (sqlgen.shrinks, repeatedly) that still
    fails against Flink on the round's tables."""
    best, verdict = query, None
    while True:
        candidates = shrinks(best)
        if not candidates:
            break
        trial = fuzz.Round(rnd.tables, [c.sql() for c in candidates], [[]] * len(candidates))
        fuzz.ask_flink(trial, work / f"shrink-{id(best)}")
        verdicts = fuzz.run_round(spark, trial, work)
        failing = [(c, v) for c, v in zip(candidates, verdicts) if v.kind in fuzz.FAILURES]
        if not failing:
            break
        best, verdict = failing[0]
    return best.sql(), verdict


def sql_main(args) -> int:
    from operators_lib.engine.spark import get_spark

    spark = get_spark()
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)  # refusals: counted
    tally, recorded = fuzz.Tally(), []
    for i in range(args.iterations):
        seed = args.seed * 100_000 + i
        rnd, queries = fuzz.generate(seed, args.queries)
        work = Path(tempfile.mkdtemp(prefix="twinflow-fuzz-"))
        t0 = time.perf_counter()
        fuzz.ask_flink(rnd, work / "flink")
        t1 = time.perf_counter()
        verdicts = fuzz.run_round(spark, rnd, work)
        t2 = time.perf_counter()
        for q, rules, v in zip(queries, rnd.rules, verdicts):
            tally.add(rules, q.sql(), v)
            if v.kind in fuzz.FAILURES:
                small, sv = shrink(spark, rnd, q, work) if args.shrink else (q.sql(), v)
                keep = args.keep / f"sql_seed{seed}_{len(tally.failures):03d}"
                keep.mkdir(parents=True, exist_ok=True)
                fuzz.Round(rnd.tables, [small], [rules]).write(keep)
                (keep / "q0000.sql").rename(keep / "query.sql")
                (keep / "verdict.txt").write_text(f"{(sv or v).kind}: {(sv or v).detail}\n"
                                                  f"original:\n{q.sql()}\n")
                print(f"round {i}: {v.kind.upper()}: {small!r}\n  {(sv or v).detail[:400]}",
                      flush=True)
        recorded.append(rnd)
        counts = Counter(v.kind for v in verdicts)
        print(f"round {i} (seed {seed}): " + ", ".join(f"{k} {n}" for k, n in
                                                     sorted(counts.items()))
              + f"  (Flink {t1 - t0:.0f} s, twinflow {t2 - t1:.0f} s)", flush=True)
        shutil.rmtree(work, ignore_errors=True)
    print(tally.table())
    if args.record:
        fuzz.save_slice(args.record, recorded, " ".join(
            ["tests/oracle/differential.py", "--family", "sql", "--seed", str(args.seed),
             "--iterations", str(args.iterations), "--queries", str(args.queries),
             "--record", str(args.record)]))
    return 1 if tally.failures else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--family", choices=(*FAMILIES, "sql"), default="over")
    ap.add_argument("--queries", type=int, default=40, help="sql: queries per round")
    ap.add_argument("--record", type=Path, default=None, help="sql: write the slice CI replays")
    ap.add_argument("--shrink", action="store_true", help="sql: shrink each failing query")
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", type=Path, default=Path("differential-failures"))
    ap.add_argument("--only", type=int, default=None, help="run only this iteration (replay)")
    args = ap.parse_args()
    if args.family == "sql":
        return sql_main(args)
    from operators_lib.engine.spark import get_spark

    spark = get_spark()
    rng = random.Random(args.seed)
    failures = 0
    for i in range(args.iterations):
        work = Path(tempfile.mkdtemp(prefix="twinflow-diff-"))
        case_dir = work / "cases" / "random" / f"case{i:03d}"
        case_dir.mkdir(parents=True)
        FAMILIES[args.family](rng, case_dir)
        if args.only is not None and i != args.only:
            shutil.rmtree(work, ignore_errors=True)
            continue
        try:
            regen(case_dir)
        except SystemExit as e:  # Flink itself cannot run this query: no reference
            error = next((ln for ln in str(e.code).splitlines() if "error" in ln), "?")
            print(f"iteration {i}: skipped, Flink fails: {error[:160]}", flush=True)
            shutil.rmtree(work, ignore_errors=True)
            continue
        problems, notes = check(spark, Case(case_dir), work / "out")
        status = ("ok" + "".join(f" ({n})" for n in notes)) if not problems else \
            "FAIL: " + "; ".join(problems)
        print(f"iteration {i}: {status}", flush=True)
        if problems:
            failures += 1
            keep = args.keep / f"seed{args.seed}_case{i:03d}"
            shutil.copytree(case_dir, keep, dirs_exist_ok=True)
            shutil.copytree(work / "out", keep / "twinflow_out", dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("_state"))
        shutil.rmtree(work, ignore_errors=True)
    ran = 1 if args.only is not None else args.iterations
    print(f"{ran - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
