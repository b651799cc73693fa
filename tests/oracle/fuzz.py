"""The SQL fuzzer's rounds: random tables and queries (sqlgen.py), Flink's answers (the oracle,
one JVM per round), twinflow's in both modes (tests/planlevel.py: the tables staged once,
each query planned and run in this process), and the verdicts.

Verdicts, per query:
  equal     both of twinflow's results are Flink's (its streaming final, or its batch final
            where the two differ or the streaming run cannot give one)
  refused   twinflow refused the query (exit 2, naming the construct): allowed
  different a result differs from Flink's: a failure
  crash     twinflow failed otherwise (exit 3 in a real run): a failure
  invalid   Flink refuses the query too (the generator made invalid SQL): not counted
  flink_fails  Flink's job fails on the data (e.g. a cast of bad text) where twinflow answered:
            reported, not yet a failure
  folded    an aggregate without GROUP BY whose WHERE Flink's planner proves never true
            (x <> x, f AND NOT f): Flink's streaming mode answers its one row (as its batch
            mode and twinflow's batch do), twinflow's stream none. twinflow refuses the
            constant conditions; the others need Calcite's simplifier. Reported, not a failure
  open      a failure already known and listed in fuzz_open.json (each with its finding):
            reported; the replay test requires it to still fail, so a fix is noticed

A recorded slice (``record``) holds each round's DDL, tables and queries with Flink's answers,
so CI replays it without Flink (tests/test_sql_fuzz.py).
"""

from __future__ import annotations

import json
import random
import traceback
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from operators_lib.errors import NOT_REPRODUCED, DataError, TwinflowError, classify
from tests.caselib import as_multiset, typed
from tests.oracle.regen_expected import blocks, oracle
from tests.oracle.sqlgen import DDL, Gen, Query, random_tables
from tests.planlevel import Tables

FAILURES = ("different", "crash")
OPEN = {q["sql"]: q["finding"]
        for q in json.loads((Path(__file__).parent / "fuzz_open.json").read_text())}
ROWS_PER_BATCH = 3  # several micro-batches per table: updates and retractions happen


@dataclass
class Answer:
    """Flink's results for one query (rows as Flink prints values; None: that mode failed)."""

    stream: list[list[str]] | None
    batch: list[list[str]] | None
    error: str = ""

    def to_json(self) -> dict:
        return {"stream": self.stream, "batch": self.batch, "error": self.error}


@dataclass
class Outcome:
    """twinflow's answer to a query: ``refused`` (exit 2: unsupported or invalid SQL, named),
    ``fails`` on the data (exit 2, as Flink's job), ``crash`` (any other exception: exit 3
    in a real run; a changelog that retracts a row it does not hold is one) or ``ran``, with
    both modes' rows as Flink prints values."""

    kind: str
    message: str = ""
    batch: list[tuple[str, ...]] = field(default_factory=list)
    stream: list[tuple[str, ...]] = field(default_factory=list)
    types: list[str] = field(default_factory=list)


def outcome(tables: Tables, query: str) -> Outcome:
    try:
        run = tables.run(query)
    except TwinflowError as e:
        return Outcome("refused", str(e))
    except Exception as e:  # noqa: BLE001 - a crash is a finding
        known = classify(e)  # as in a real run (spark.engine_failures)
        if isinstance(known, DataError):  # a value twinflow refuses (exit 2) is a refusal
            refused = str(known).startswith(NOT_REPRODUCED)
            return Outcome("refused" if refused else "fails", str(known))
        return Outcome("crash", traceback.format_exc(limit=-3))
    return Outcome("ran", "", sorted(run.batch), sorted(run.stream),
                   [run.types[c] for c in run.columns])


@dataclass
class Verdict:
    kind: str
    detail: str = ""


@dataclass
class Round:
    """Tables and queries; ``answers`` are Flink's, filled by ``ask_flink`` or a slice."""

    tables: dict[str, str]
    queries: list[str]
    rules: list[list[str]]
    answers: list[Answer] = field(default_factory=list)
    ddl: str = DDL

    def write(self, where: Path) -> None:
        where.mkdir(parents=True, exist_ok=True)
        (where / "ddl.sql").write_text(self.ddl)
        for name, text in self.tables.items():
            (where / f"{name}.csv").write_text(text)
        for i, q in enumerate(self.queries):
            (where / f"q{i:04d}.sql").write_text(q + "\n")

    def to_json(self) -> dict:
        return {"ddl": self.ddl, "tables": self.tables,
                "queries": [{"sql": q, "rules": r, "flink": a.to_json()}
                            for q, r, a in zip(self.queries, self.rules, self.answers)]}

    @staticmethod
    def from_json(data: dict) -> Round:
        qs = data["queries"]
        return Round(data["tables"], [q["sql"] for q in qs], [q["rules"] for q in qs],
                     [Answer(**q["flink"]) for q in qs], data["ddl"])


def generate(seed: int, n: int) -> tuple[Round, list[Query]]:
    rng = random.Random(seed)
    tables = random_tables(rng)
    gen = Gen(rng)
    queries = [gen.query() for _ in range(n)]
    return Round(tables, [q.sql() for q in queries], [sorted(q.all_rules()) for q in queries]), \
        queries


def ask_flink(rnd: Round, work: Path) -> None:
    """Flink's answers to every query of the round, in one oracle process."""
    rnd.write(work)
    lines, _ = oracle(work, "--mode", "both")
    per_query: dict[str, list[str]] = defaultdict(list)
    current = None
    for line in lines:
        if line.startswith("### query="):
            current = line.split("=")[1].split()[0]
        if current:
            per_query[current].append(line)
    rnd.answers = [_answer(blocks(per_query[f"q{i:04d}.sql"])) for i in range(len(rnd.queries))]


def _answer(b: dict) -> Answer:
    def rows(key):
        got = b.get(key)
        return None if got is None else [r for r in _csv(got[1:])]

    stream = rows(("streaming", "final"))
    error = " | ".join(b.get((m, "error"), [""])[0] for m in ("streaming", "batch")).strip(" |")
    return Answer(stream, rows(("batch", "final")), error)


def _csv(lines: list[str]) -> list[list[str]]:
    import csv

    return list(csv.reader(lines))


def judge(outcome: Outcome, answer: Answer) -> Verdict:
    if answer.stream is None and answer.batch is None:
        if outcome.kind == "fails":  # both fail on the data (a bad CAST, a division by zero)
            return Verdict("equal", outcome.message)
        return Verdict("invalid" if outcome.kind != "ran" else "flink_fails", answer.error[:300])
    if outcome.kind == "fails":
        return Verdict("different", f"twinflow fails on the data, Flink answers: "
                       f"{outcome.message[:300]}")
    if outcome.kind == "refused":
        return Verdict("refused", outcome.message.splitlines()[0][:300])
    if outcome.kind == "crash":
        return Verdict("crash", outcome.message[-1500:])

    def multiset(rows: list) -> list[tuple]:
        return as_multiset(typed(rows, outcome.types))

    refs = [multiset(r) for r in (answer.stream, answer.batch) if r is not None]
    if (len(refs) == 2 and refs[0] == refs[1] == multiset(outcome.batch) and len(refs[0]) == 1
            and not outcome.stream):
        return Verdict("folded", "Flink's planner folded the WHERE to an empty input")
    for mode, ours in (("stream", outcome.stream), ("batch", outcome.batch)):
        mine = multiset(ours)
        if not any(mine == ref for ref in refs):
            ref = refs[0]
            only_ours = [r for r in mine if r not in ref][:3]
            only_flink = [r for r in ref if r not in mine][:3]
            return Verdict("different", f"{mode}: {len(mine)} rows vs Flink's {len(ref)}; "
                           f"only twinflow: {only_ours}; only Flink: {only_flink}")
    return Verdict("equal")


def known(sql: str, v: Verdict) -> Verdict:
    """A failure listed in fuzz_open.json is ``open``."""
    return Verdict("open", OPEN[sql]) if v.kind in FAILURES and sql in OPEN else v


def run_round(spark, rnd: Round, work: Path) -> list[Verdict]:
    data = {}
    for name, text in rnd.tables.items():
        (work / f"{name}.csv").write_text(text)
        data[name] = work / f"{name}.csv"
    tables = Tables(spark, rnd.ddl, data, ROWS_PER_BATCH, work / "twinflow")
    try:
        return [known(q, judge(outcome(tables, q), a)) for q, a in zip(rnd.queries, rnd.answers)]
    finally:
        tables.close()


class Tally:
    """Counts per grammar rule and verdict, and the failures."""

    def __init__(self) -> None:
        self.by_rule: dict[str, Counter] = defaultdict(Counter)
        self.total: Counter = Counter()
        self.failures: list[tuple[str, Verdict]] = []
        self.refusals: Counter = Counter()  # twinflow's reasons, without the file and line
        self.open: dict[str, str] = {}

    def add(self, rules: list[str], sql: str, v: Verdict) -> None:
        self.total[v.kind] += 1
        for r in rules:
            self.by_rule[r][v.kind] += 1
        if v.kind in FAILURES:
            self.failures.append((sql, v))
        if v.kind == "open":
            self.open[sql] = v.detail
        if v.kind == "refused":
            self.refusals[v.detail.split(" (query.sql")[0]] += 1

    def table(self) -> str:
        kinds = ["generated", "equal", "refused", "different", "crash", "open", "folded",
                 "invalid", "flink_fails"]
        lines = [f"{'rule':28}" + "".join(f"{k:>12}" for k in kinds)]
        lines += [f"  open: {sql!r}: {finding}" for sql, finding in self.open.items()]
        for rule in sorted(self.by_rule):
            c = self.by_rule[rule]
            lines.append(f"{rule:28}" + "".join(
                f"{(sum(c.values()) if k == 'generated' else c[k]):>12}" for k in kinds))
        t = self.total
        lines.append(f"{'TOTAL':28}" + "".join(
            f"{(sum(t.values()) if k == 'generated' else t[k]):>12}" for k in kinds))
        valid = sum(t.values()) - t["invalid"]
        if valid:
            lines.append(f"refused {t['refused'] / valid:.0%} of the {valid} queries Flink runs")
        lines += [f"  {n:4}  {reason}" for reason, n in self.refusals.most_common(20)]
        return "\n".join(lines)


def save_slice(path: Path, rounds: list[Round], command: str) -> None:
    path.write_text(json.dumps({"command": command, "rounds": [r.to_json() for r in rounds]},
                               indent=1, ensure_ascii=False) + "\n")


def load_slice(path: Path) -> list[Round]:
    return [Round.from_json(r) for r in json.loads(path.read_text())["rounds"]]
