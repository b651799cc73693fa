"""A query over a set of tables run by twinflow in this process, at the level of its plan: the
corpus tests' and the SQL fuzzer's (tests/oracle/fuzz.py) runner.

The tables are parsed and staged once (``Tables``; ingest's task functions run in this process,
no Spark job), as micro-batches of ``rows_per_batch`` rows. Each query is then planned and run
in each mode over the staged micro-batches: batch as the batch job builds it
(batch/planner.py), stream on the operator harness (tests/harness.py: the same plan and
processors as Structured Streaming). What a ``twinflow run`` adds around them (the Spark ingest
job, CSV writers, the result store, the parity job, report.json) is not run: the results come
back as rows (``PlanRun``), values as Flink prints them (output.csv_line; NULL as an empty
field), with what the corpus checks of a run's report (micro-batches, late rows, warnings)
and the parity verdict recomputed from them (``PlanRun.parity``). Real runs keep what only
they show (tests/test_*_cases.py: restarts from a checkpoint, one Structured Streaming run per
feature family, one run per parity verdict).
"""

from __future__ import annotations

import csv
import io
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from operators_lib.batch.planner import batch_dataframe
from operators_lib.changelog import ADDS, RETRACTS
from operators_lib.io import ingest
from operators_lib.io.output import csv_line
from operators_lib.parity.compare import Diff, empty_global_aggregate, not_comparable
from operators_lib.plan import (
    BATCH,
    EMIT_TS,
    LATE,
    LATE_WINDOW,
    LINE,
    OP,
    ROWNUM,
    SEQ,
    SESSION_SPLIT,
    Node,
    append_only,
    batch_only,
    ends_in_last_part,
    processing_time_windows,
    quote,
    source_tables,
)
from operators_lib.relational import WEND
from operators_lib.runs.sources import sources
from operators_lib.runs.staging import plan_warnings
from operators_lib.runs.streaming import late_tags
from operators_lib.sql import nonfinite
from operators_lib.sql.script import script_of
from operators_lib.state import lifecycle
from operators_lib.state.queries import plan_query
from operators_lib.stream.runner import changelog_files
from tests.caselib import Case, typed
from tests.harness import HarnessRuntime

Row = tuple[str, ...]


@dataclass
class PlanRun:
    """A query's results in each mode it ran (``None``: not run), rows as Flink prints values."""

    plan: Node
    columns: list[str]
    types: dict[str, str]  # column -> its type's SQL
    batch: list[Row] | None = None
    changes: list[tuple[int, str, Row]] = field(default_factory=list)  # (micro-batch, op, row)
    stream: list[Row] | None = None  # the changelog applied
    micro_batches: int = 0
    late: dict[str, set[int]] = field(default_factory=dict)  # per table: its late rows
    late_windows: set[tuple[int, int]] = field(default_factory=set)  # (row, window end)
    session_splits: int = 0
    tables: Tables | None = None

    @property
    def late_rows(self) -> int:
        return sum(map(len, self.late.values()))

    @property
    def warnings(self) -> list[str]:
        return plan_warnings(self.plan)

    def rows(self, name: str) -> list[list[str]]:
        """An output file of a ``twinflow run`` (stream.csv, batch.csv, changelog.csv): its
        header, then its rows (caselib's comparisons read a run's files the same way)."""
        if name == "changelog.csv":
            return [["op", *self.columns], *[[op, *r] for _, op, r in self.changes]]
        rows = {"stream.csv": self.stream, "batch.csv": self.batch}[name]
        if rows is None:
            raise ValueError(f"{name}: the query did not run in that mode")
        return [list(self.columns), *map(list, rows)]

    def parity(self) -> str:
        """The verdict a ``twinflow run`` in both modes gives (runs/checking.parity's rules): the
        results compared as multisets (floats at 12 significant digits); a difference
        explained by an empty input's global aggregate, by the late rows (batch again without
        them: a Spark job) or by split sessions. (State TTL's verdict is the real run's:
        tests/test_state_ttl.py.)"""
        if not_comparable(self.plan):
            return "not_applicable"
        if self._same(self.batch):
            return "equal"
        if empty_global_aggregate(self.plan, Diff([], [], batch_rows=len(self.batch),
                                                  stream_rows=len(self.stream))):
            return "explained_by_empty_input"
        if (self.late or self.late_windows) and self._same(self.tables.batch(
                self.plan, self.late, self.late_windows)):
            return "explained_by_late_rows"
        return "not_applicable" if self.session_splits else "failed"

    def _same(self, batch: list[Row]) -> bool:
        """Equal as multisets of typed rows (-0.0 as 0.0, as the parity job compares)."""
        types = [self.types[c] for c in self.columns]
        return Counter(typed(batch, types)) == Counter(typed(self.stream, types))


class Tables:
    """A set of tables parsed once and staged in micro-batches of ``rows_per_batch`` rows, with
    or without end-of-input markers in the last part (plan.ends_in_last_part), when a plan
    first needs them."""

    def __init__(self, spark: SparkSession, ddl: str, data: dict[str, Path],
                 rows_per_batch: int, work: Path | None = None, sql_dir: Path | None = None
                 ) -> None:
        """``sql_dir``: where the SQL's relative ``python.files`` and WITH ``path`` are read
        from."""
        self.spark, self.ddl, self.rows_per_batch = spark, ddl, rows_per_batch
        self.sql_dir = sql_dir
        self.work = Path(work or tempfile.mkdtemp(prefix="twinflow-planlevel-"))
        self.catalog = script_of([("ddl.sql", ddl), ("q.sql", "SELECT 1")],
                                 {"ddl.sql": sql_dir} if sql_dir else None).catalog
        read = {k: t for k, t in self.catalog.tables.items()  # given files or a WITH binding
                if k in {d.lower() for d in data}
                or dict(t.options).get("connector") == "filesystem"}
        self.parsed = ingest.parse(None, {
            key: ingest.TableInput(s.table, s.files(required=True), s.format,
                                   None if s.root.is_file() else s.root)
            for key, s in sources(read, data).items()}, self.work / "parsed")
        self.states: dict[bool, Path] = {}
        self.runs = 0

    def staged(self, plan: Node) -> tuple[Path, dict[str, list[Path]]]:
        """The staged state the plan reads (its ``staged/``, every table offered to its end)
        and each table's parts, as runs/staging.stage gives them."""
        ends = ends_in_last_part(plan)
        state = self.states.get(ends)
        if state is None:
            state = self.states[ends] = self.work / f"staged-{int(ends)}"
            lifecycle.stage(None, self.parsed, state, self.rows_per_batch, file_batches=False,
                            ends=ends)
            for key, table in self.catalog.tables.items():
                lifecycle.offer(state, key, lifecycle.staged_files(state, key), table)
        pool = {}
        for key, table in source_tables(plan).items():
            if table.constant:  # a SELECT without FROM: its one row, offered as the pipeline's
                pool[key] = ingest.stage_constant(state / "staged" / key)
                lifecycle.offer(state, key, pool[key], table)
            else:
                pool[key] = lifecycle.staged_files(state, key)
        return state, pool

    def run(self, query: str, mode: str = "both", topn_split: int = 1) -> PlanRun:
        """The query in ``mode`` (batch, stream or both: of those that exist for it, as in a
        run); twinflow's errors raise as in a run."""
        names = ("ddl.sql", "query.sql")
        plan = plan_query(script_of(list(zip(names, (self.ddl, query))), self.sql_dir and {
            n: self.sql_dir for n in names}), self.spark, topn_split)
        nonfinite.check(plan, self.parsed.nonfinite())
        out = PlanRun(plan, [f.name for f in plan.fields],
                      {f.name: f.type.sql() for f in plan.fields}, tables=self)
        if mode != "stream" and not processing_time_windows(plan):
            out.batch = self.batch(plan)
        if mode != "batch" and not batch_only(plan):
            self._stream(plan, out)
        return out

    def batch(self, plan: Node, late: dict[str, set[int]] | None = None,
              late_windows: set[tuple[int, int]] | None = None) -> list[Row]:
        """Batch mode's rows; without the ``late`` rows and ``late_windows`` as parity
        recomputes it (batch_dataframe's drop_rows, drop_windows)."""
        spark = self.spark
        _, pool = self.staged(plan)
        drop = {k: spark.createDataFrame([(r,) for r in rows], f"{ROWNUM} bigint")
                for k, rows in (late or {}).items()}
        windows = spark.createDataFrame(list(late_windows), T.StructType([
            T.StructField(ROWNUM, T.LongType()), T.StructField(WEND, T.LongType())])) \
            if late_windows else None
        line = csv_line([(F.col(quote(f.name)), f.type) for f in plan.fields])
        return [_parse(r[0]) for r in batch_dataframe(spark, plan, pool, drop, windows)
                .select(line).collect()]

    def _stream(self, plan: Node, out: PlanRun) -> None:
        """The stream on the harness from a fresh checkpoint; its changelog read back from the
        sink's files (stream/runner.py's layout), in emission order (plan.PLACE)."""
        staged, _ = self.staged(plan)
        self.runs += 1
        state = self.work / f"run-{self.runs}"
        state.mkdir()
        (state / "staged").symlink_to(staged / "staged")
        tables = source_tables(plan)
        out.micro_batches = lifecycle.stream(self.spark, plan, state, list(tables),
                                             self.rows_per_batch, HarnessRuntime()).micro_batches
        log = pa.concat_tables(
            pq.read_table(d, columns=[BATCH, EMIT_TS, ROWNUM, SEQ, OP, LINE])
            for d in changelog_files(state / "changelog", state / "checkpoint"))
        log = log.sort_by([(c, "ascending", "at_start") for c in (BATCH, EMIT_TS, ROWNUM, SEQ)])
        shutil.rmtree(state, ignore_errors=True)
        data = log.filter(pc.is_valid(log[LINE])).to_pydict()
        out.changes = [(b, op, _parse(line)) for b, op, line in zip(data[BATCH], data[OP],
                                                                    data[LINE])]
        out.stream = _materialize(out.changes, append_only(plan))
        markers = log.filter(pc.is_null(log[LINE])).to_pydict()
        tags = late_tags(plan, tables)
        for op, tag, rownum in zip(markers[OP], markers[EMIT_TS], markers[ROWNUM]):
            if op == LATE:  # runs/streaming._late_rows: one table's are its own
                out.late.setdefault(next(iter(tables)) if len(tables) == 1 else tags[tag],
                                    set()).add(rownum)
            elif op == LATE_WINDOW:
                out.late_windows.add((rownum, tag))
            elif op == SESSION_SPLIT:
                out.session_splits += 1

    def close(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)


def _parse(line: str) -> Row:
    """A CSV line's fields (a quoted one may hold a line break)."""
    return tuple(next(csv.reader(io.StringIO(line))))


def _materialize(changes: list[tuple[int, str, Row]], append: bool) -> list[Row]:
    """The changelog applied in order; a retraction of a row not held (a gap), or any in an
    append-only query's, raises (a real run refuses to write such a result)."""
    bag: Counter = Counter()
    for _, op, row in changes:
        if op in ADDS:
            bag[row] += 1
        elif op in RETRACTS:
            if bag[row] <= 0 or append:
                raise AssertionError(f"the changelog retracts a row it does not hold or an "
                                     f"append-only query retracts: {op} {row}")
            bag[row] -= 1
    return [r for r, n in bag.items() for _ in range(n)]


def run_case(spark: SparkSession, case: Case, work: Path, rows_per_batch: int,
             mode: str = "both", topn_split: int = 1) -> PlanRun:
    """A corpus case's query over its tables (``Tables`` in ``work``)."""
    tables = Tables(spark, (case.dir / "ddl.sql").read_text(), case.data, rows_per_batch, work,
                    case.dir)
    return tables.run((case.dir / "query.sql").read_text(), mode, topn_split)
