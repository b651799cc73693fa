"""The stage step of every run: parse the input the run brings (a bad header or a NaN the query
cannot take fails the run here, before anything is staged) and stage it as micro-batch files
in the query's state (state/lifecycle.stage, one transaction).

Where bounded and scheduled runs differ, ``spec.bounded`` says:

- a bounded run (``twinflow run``) stages all of its input as one run of micro-batches, its
  last part announcing the end of the input; a stream stopped early (``--stop-after-batches``)
  resumes with the same SQL, data and batch size (``resume_decision``), any other run starts
  from a clean state;
- a scheduled run stages the files that landed since the last run (each starts a micro-batch),
  refuses more malformed rows than ``max_rejected_rows`` (nothing is staged) and binds the
  state to the query's SQL, split and layout (binding.bind_state).
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

from pyspark.sql import SparkSession

from operators_lib.catalog import TableDef
from operators_lib.engine.locations import check_shared
from operators_lib.engine.stores import store_of
from operators_lib.errors import InputError, SqlError
from operators_lib.io import ingest, storage
from operators_lib.io.remote import Store
from operators_lib.ops.reports import (
    BoundedReport,
    Column,
    SparkSettings,
    StreamReport,
    TableCounts,
)
from operators_lib.plan import (
    Join,
    Node,
    batch_only,
    ends_in_last_part,
    find,
    processing_time_windows,
    scans,
    source_tables,
)
from operators_lib.runs import binding, sources
from operators_lib.runs.spec import RunSpec
from operators_lib.sql import nonfinite
from operators_lib.state import lifecycle
from operators_lib.state.lifecycle import RunRecord
from operators_lib.state.manifest import BoundedRun, Manifest
from operators_lib.state.queries import record_query
from operators_lib.state.snapshots import KEPT
from operators_lib.stream.layout import STATE_LAYOUT

MAX_DEFAULT_BATCH = 100_000
PARSED = "parsed"  # in the state: the input as the executors parsed it (ingest.py)


@dataclass
class Run:
    """What the steps of one run share."""

    spec: RunSpec
    plan: Node
    t0: float  # when the run started (time.perf_counter)
    # A bounded run's report so far (report.json); a scheduled run's stream report's.
    report: BoundedReport | StreamReport | None = None
    parsed: ingest.Parsed | None = None  # the new input (None: a re-run stages nothing)
    pool: dict[str, list[Path]] = field(default_factory=dict)  # each table's staged files
    rows_per_batch: int = 0
    recorded: RunRecord | None = None  # a scheduled re-run: the interval's own record
    replayed: bool = False  # the state was rebuilt from the retained input in this run
    new_rows: dict[str, int] = field(default_factory=dict)  # per table key
    waited: dict[str, float] | None = None  # how long each table's oldest new file waited
    fingerprint: str = ""  # a bounded run's: what a stopped stream may resume with
    discarded: str | None = None  # why an unfinished stream state was discarded
    written: list[str] = field(default_factory=list)  # a bounded run's output files
    notes: list[str] = field(default_factory=list)  # the input bindings' (runs/sources.py)

    @property
    def tables(self) -> dict[str, TableDef]:
        return source_tables(self.plan)

    @property
    def pending(self) -> Path:
        """Where a bounded run's outputs are written until they move into place."""
        return self.spec.state / "pending"

    @property
    def streams(self) -> bool:
        """Whether the run streams (a scheduled re-run rebuilds its outputs only)."""
        mode = self.spec.mode
        return (self.recorded is None if not self.spec.bounded else
                mode == "stream" or (mode == "both" and not batch_only(self.plan)))

    @property
    def batches(self) -> bool:
        """Whether a bounded run runs batch mode (a scheduled run's batch is its parity's)."""
        mode = self.spec.mode
        return self.spec.bounded and (
            mode == "batch" or (mode == "both" and not processing_time_windows(self.plan)))


def default_rows_per_batch(largest_table: int) -> int:
    """About four micro-batches per input (several on small inputs), at most 100,000 rows."""
    return max(1, min(MAX_DEFAULT_BATCH, math.ceil(largest_table / 4)))


def stage(spec: RunSpec, spark: SparkSession, plan: Node, recorded: RunRecord | None,
          t0: float) -> Run:
    """Parse and stage the run's input (module docstring). ``recorded``: the record of a
    scheduled interval that ran before; its re-run stages nothing. ``t0``: when the run
    started."""
    if recorded is not None:
        return Run(spec, plan, t0, recorded=recorded)
    state = spec.state
    if spec.bounded and storage.is_local(spec.out):  # a store: every host reaches it
        check_shared(spark, spec.out)
    # A bad header fails the run here, and so does a NaN or Infinity the query cannot take.
    notes: list[str] = []
    inputs, store = _inputs(spec, spark, plan, notes)
    parsed = ingest.parse(spark, inputs, state / PARSED, store=store)
    nonfinite.check(plan, parsed.nonfinite())
    run = Run(spec, plan, t0, parsed=parsed, notes=notes)
    resume = False
    if spec.bounded:
        run.fingerprint = _fingerprint(spec, parsed)
        resume, run.discarded = resume_decision(state, run.fingerprint, spec.mode)
        run.rows_per_batch = spec.rows_per_batch or default_rows_per_batch(max(
            (parsed.rows(k) for k in parsed.files), default=0))
        state.mkdir(parents=True, exist_ok=True)
        if not resume:
            _clear(state)
    else:
        run.rows_per_batch = spec.rows_per_batch or 0
        # How long the oldest new file of each table waited for this run (the ops view's lag).
        run.waited = {key: round(time.time() - min(f.mtime for f in files), 1)
                      for key, files in parsed.files.items() if files}
        spec.out.mkdir(parents=True, exist_ok=True)
        ingest.write_rejected(parsed, spec.out / "rejected.csv")
        check_rejected(spec, parsed, spec.out / "rejected.csv")
        lifecycle.discard_unstaged(state)
        rebuilt = binding.bind_state(spec)
    if not resume:
        lifecycle.stage(spark, parsed, state, run.rows_per_batch, file_batches=not spec.bounded,
                        ends=spec.bounded and ends_in_last_part(plan))
    record_query(state, list(spec.sql), spec.topn_split, run.rows_per_batch)
    run.pool = {k: ingest.stage_constant(state / "staged" / k) if t.constant else
                lifecycle.staged_files(state, k) for k, t in run.tables.items()}
    if spec.bounded:
        run.new_rows = {k: parsed.rows(k) for k in parsed.files}
        run.report = _bounded_report(run, spark)
        return run
    storage.rmtree(parsed.dir)  # staged: the parsed copy is not needed
    run.new_rows = _new_rows(spec, list(run.tables))
    run.report = StreamReport(
        query=spec.name, interval=spec.key,
        new_input_rows={s.table.name: 0 for s in scans(plan)}
        | {t.name: run.new_rows[k] for k, t in run.tables.items()},
        rejected_rows=parsed.rejected(), max_rejected_rows=spec.max_rejected_rows,
        topn_split=spec.topn_split, state_rebuilt=rebuilt, columns=columns_of(plan))
    return run


def columns_of(plan: Node) -> list[Column]:
    """The result's columns with their SQL types, as the reports list them."""
    return [Column(name=f.name, type=f.type.sql()) for f in plan.fields]


def _new_rows(spec: RunSpec, tables: list[str]) -> dict[str, int]:
    """Each table's rows that the interval brought: those staged since the run before it was
    recorded. That is more than this try staged where a try of the interval that failed, or
    was killed, after staging did the staging (a retry stages nothing again), or where a run
    of an earlier interval failed after staging (this run streams its rows)."""
    previous = lifecycle.previous_record(spec.state, spec.key)
    earlier = previous.rows if previous else {}
    staged = Manifest.load(spec.state)
    return {k: staged.table(k).rows - earlier.get(k, 0) for k in tables}


def _inputs(spec: RunSpec, spark: SparkSession, plan: Node, notes: list[str]
            ) -> tuple[dict[str, ingest.TableInput], Store | None]:
    """Each table's files to parse (runs/sources.py binds them): a bounded run's whole input, a
    scheduled run's files that the manifest does not list yet, and how to reach the object
    store they are on (None: none is); the bindings' notes are added to ``notes``."""
    tables = {k: t for k, t in source_tables(plan).items() if not t.constant}
    if not spec.bounded:
        for table in source_tables(plan).values():
            if table.constant:
                raise SqlError(f"query {spec.name}: a SELECT without FROM (a constant row) is "
                               "not supported in scheduled runs yet; run it with twinflow run")
    store = store_of(spark)
    bound = sources.sources(tables, spec.inputs, store)
    notes.extend(f"table {s.table.name}: {n}" for s in bound.values() for n in s.notes)
    if spec.sink is not None:
        notes.extend(f"table {spec.sink.table}: {n}" for n in spec.sink.binding.notes)
    staged = None if spec.bounded else Manifest.load(spec.state)
    inputs = {}
    for key, source in bound.items():
        seen = staged.table(key).files if staged is not None else {}
        newest = (max(seen, key=lambda name: name.split("/"))
                  if seen and spec.skip_older_folders else None)
        listing = source.listing(required=spec.bounded, store=store, after=newest)
        files = list(listing)
        root = None if files == [source.root] else source.root
        files = [f for f in files if (ingest.relative(f, root) or ingest.name_of(f)) not in seen]
        stats = {f: listing[f] for f in files}
        inputs[key] = ingest.TableInput(source.table, files, source.format, root, stats)
    return inputs, store


def _clear(state: Path) -> None:
    """What another run left in a bounded run's state, but its input, snapshots and
    history."""
    for entry in state.iterdir():
        if entry.name == PARSED or entry.name in KEPT:
            continue
        if entry.is_dir():
            storage.rmtree(entry)
        else:
            entry.unlink()


def check_rejected(spec: RunSpec, parsed: ingest.Parsed, rejected_csv: Path) -> None:
    """More malformed rows than ``max_rejected_rows`` in the new input: nothing is staged (the
    input is not consumed, so fixing or removing it lets the next run go on)."""
    rejected = parsed.rejected()
    if rejected <= spec.max_rejected_rows:
        return
    total = rejected + parsed.rows()
    per_file = ", ".join(f"{f.key}: {bad}" for k in parsed.files
                         for f, _, bad in parsed.per_file(k) if bad)
    raise InputError(
        f"query {spec.name}: {rejected} of {total} rows of the new input files were rejected "
        f"as malformed ({per_file}), more than max_rejected_rows = {spec.max_rejected_rows}; "
        f"they are listed with file, line and reason in {rejected_csv}. Nothing was staged: "
        "fix or remove those rows, or raise max_rejected_rows in the query's config")


def _bounded_report(run: Run, spark: SparkSession) -> BoundedReport:
    """A bounded run's report as far as staging goes."""
    spec, parsed, plan = run.spec, run.parsed, run.plan
    discarded = run.discarded
    return BoundedReport(
        sql=[str(p) for p in spec.sql], mode=spec.mode,
        rows_per_batch=run.rows_per_batch, topn_split=spec.topn_split,
        tables={t.name: TableCounts(input_rows=parsed.rows(k) + parsed.rejected(k),
                                    accepted_rows=parsed.rows(k),
                                    rejected_rows=parsed.rejected(k),
                                    micro_batch_files=len(run.pool[k]))
                for k, t in run.tables.items() if not t.constant},
        columns=columns_of(plan),
        warnings=plan_warnings(plan) + run.notes + ([
            f"{discarded}: its state in {spec.state} was discarded and "
            + ("the stream recomputed from scratch" if spec.mode != "batch" else "not resumed")]
            if discarded else []),
        # The settings in force (the user's where given: operators_lib/engine/spark.py).
        spark=SparkSettings(master=spark.sparkContext.master, app=spark.sparkContext.appName,
                            shuffle_partitions=int(spark.conf.get(
                                "spark.sql.shuffle.partitions"))),
        timings_s={"ingest": round(time.perf_counter() - run.t0, 3)},
    )


def plan_warnings(plan: Node) -> list[str]:
    """What a user should know about how the query will run."""
    return [f"a {j.kind} join without an equality key runs on a single partition (every row "
            "of both inputs meets in one task), as in Flink" for j in find(plan, Join)
            if not j.left_keys]


def _fingerprint(spec: RunSpec, parsed: ingest.Parsed) -> str:
    """What a stopped stream run may resume with: the same SQL, input (its digest, from the
    tasks that read it), batch size and split."""
    h = hashlib.sha256()
    for p in spec.sql:
        h.update(Path(p).read_bytes())
    h.update(parsed.digest().encode())
    # The batch size as given (by default it follows from the data); the split changes the
    # state layout.
    h.update(f"{spec.rows_per_batch}:{spec.topn_split}".encode())
    h.update(STATE_LAYOUT.encode())  # a stopped run of another layout starts afresh
    return h.hexdigest()


def set_run_status(state: Path, fingerprint: str, status: str) -> None:
    """A bounded stream run's fingerprint and status in the state's manifest (what
    ``resume_decision`` reads; the run's record is lifecycle.record_run's)."""
    manifest = Manifest.load(state)
    manifest.run = BoundedRun(fingerprint=fingerprint, status=status)
    manifest.save(state)


def resume_decision(state: Path, fingerprint: str, mode: str) -> tuple[bool, str | None]:
    """(resume the stream state?, why an unfinished stream's state is discarded, if it is).

    Only a stream stopped by ``--stop-after-batches`` resumes, and only with the same fingerprint
    (SQL, data, batch size, split). A run that failed or was killed left its record at
    "running": its checkpoint may be what failed, so it is recomputed, never silently."""
    record = Manifest.load(state).run
    status = None if record is None else record.status
    if status == "stopped" and record.fingerprint == fingerprint and mode != "batch":
        return True, None
    if status == "stopped":
        return False, ("batch mode does not resume the stopped stream run" if mode == "batch"
                       else "the stopped stream run was for other SQL, data or arguments")
    if status == "running":
        return False, "the previous stream run did not finish (it failed or was interrupted)"
    if record is None and (state / "checkpoint").exists():
        return False, "the stream state has no record of how its run ended"
    return False, None
