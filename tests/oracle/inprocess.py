"""Many queries over one set of tables, run by twinflow in one process: the SQL fuzzer's fast
path (tests/oracle/fuzz.py).

The tables are parsed and staged once (``Tables``); each query is then planned and run in both
modes over the staged micro-batches: batch as the batch job builds it (batch/planner.py), stream
on the operator harness (tests/harness.py: the same plan and processors as Structured
Streaming). No CSV is written and no parity job runs: the fuzzer compares each mode's result
with Flink's, which is the stronger check. A query costs a few small Spark jobs instead of a
whole ``twinflow run``.

Outcomes: ``refused`` (twinflow's exit 2: unsupported or invalid SQL, named), ``crash`` (any
other exception: exit 3 in a real run), or both modes' results as Flink renders values. A
changelog that retracts a row it does not hold is a crash too (a real run refuses to write it).
"""

from __future__ import annotations

import shutil
import tempfile
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from operators_lib.batch.planner import batch_dataframe
from operators_lib.changelog import ADDS, RETRACTS
from operators_lib.errors import DataError, TwinflowError, classify
from operators_lib.io import ingest
from operators_lib.io.output import csv_text
from operators_lib.plan import OP, PLACE, ends_in_last_part, quote, source_tables
from operators_lib.sql.script import script_of
from operators_lib.state import lifecycle
from operators_lib.state.queries import plan_query
from operators_lib.state.result_store import changelog
from tests.harness import HarnessRuntime

NULL = "NULL"


@dataclass
class Outcome:
    kind: str  # "ran" | "refused" | "fails" (on the data: exit 2, as Flink's job) | "crash"
    message: str = ""
    batch: list[tuple[str, ...]] = field(default_factory=list)  # rows as Flink prints values
    stream: list[tuple[str, ...]] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)


class Tables:
    """A set of tables parsed and staged once, in micro-batches of ``rows_per_batch`` rows,
    twice: with and without end-of-input markers in the last part (plan.ends_in_last_part)."""

    def __init__(self, spark: SparkSession, ddl: str, data: dict[str, Path],
                 rows_per_batch: int, work: Path | None = None) -> None:
        self.spark, self.ddl, self.rows_per_batch = spark, ddl, rows_per_batch
        self.work = Path(work or tempfile.mkdtemp(prefix="twinflow-fuzz-"))
        catalog = script_of([("ddl.sql", ddl), ("q.sql", "SELECT 1")]).catalog
        parsed = ingest.parse(spark, {k: (catalog.tables[k], ingest.input_files(p))
                                      for k, p in data.items()}, self.work / "parsed")
        self.states: dict[bool, Path] = {}
        for ends in (False, True):
            state = self.work / f"staged-{int(ends)}"
            lifecycle.stage(spark, parsed, state, rows_per_batch, file_batches=False, ends=ends)
            for key, table in catalog.tables.items():
                lifecycle.offer(state, key, lifecycle.staged_files(state, key), table)
            self.states[ends] = state
        self.runs = 0

    def run(self, query: str) -> Outcome:
        try:
            plan = plan_query(script_of([("ddl.sql", self.ddl), ("query.sql", query)]),
                              self.spark, 1)
        except TwinflowError as e:
            return Outcome("refused", str(e))
        except Exception:  # noqa: BLE001 - a planner crash is a finding
            return Outcome("crash", traceback.format_exc(limit=-3))
        columns = [f.name for f in plan.fields]
        types = [f.type.sql() for f in plan.fields]
        try:
            staged = self.states[ends_in_last_part(plan)]
            tables = list(source_tables(plan))
            pool = {k: lifecycle.staged_files(staged, k) for k in tables}
            text = [csv_text(F.col(quote(f.name)), f.type).alias(f.name) for f in plan.fields]
            batch = [_row(r) for r in batch_dataframe(self.spark, plan, pool)
                     .select(*text).collect()]
            self.runs += 1
            state = self.work / f"run-{self.runs}"
            state.mkdir()
            (state / "staged").symlink_to(staged / "staged")
            lifecycle.stream(self.spark, plan, state, tables, self.rows_per_batch,
                             HarnessRuntime())
            log = changelog(self.spark, plan, state)
            rows = log.orderBy(*PLACE).select(OP, *text).collect()
            shutil.rmtree(state, ignore_errors=True)
            stream = _materialize([(r[0], _row(r[1:])) for r in rows])
        except TwinflowError as e:
            return Outcome("refused", str(e), columns=columns, types=types)
        except Exception as e:  # noqa: BLE001
            known = classify(e)  # as in a real run (spark.engine_failures)
            if isinstance(known, DataError):
                return Outcome("fails", str(known), columns=columns, types=types)
            return Outcome("crash", traceback.format_exc(limit=-3), columns=columns, types=types)
        return Outcome("ran", "", sorted(batch), sorted(stream), columns, types)

    def close(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)


def _row(values) -> tuple[str, ...]:
    return tuple(NULL if v is None else v for v in values)


def _materialize(changes: list[tuple[str, tuple]]) -> list[tuple]:
    """The changelog applied in order; a retraction of a row not held raises (a gap)."""
    bag: Counter = Counter()
    for op, row in changes:
        if op in ADDS:
            bag[row] += 1
        elif op in RETRACTS:
            if bag[row] <= 0:
                raise AssertionError(f"the changelog retracts a row it does not hold: {op} "
                                     f"{row}")
            bag[row] -= 1
    return [r for r, n in bag.items() for _ in range(n)]
