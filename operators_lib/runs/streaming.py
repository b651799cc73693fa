"""The offer, stream and materialize steps of every run: offer the staged input to the stream,
run the streaming query from the state's checkpoint to the end of what was offered
(``availableNow``), and write the run's outputs from its changelog, on the executors.

Where bounded and scheduled runs differ, ``spec.bounded`` says:

- a bounded run offers its parts (the first ``--stop-after-batches`` of them) and, once all
  are, the end of its input; it writes the whole changelog (changelog.csv), the result
  (stream.csv: an updating one merged by result_store.py) and its late rows (late.csv) into
  ``pending/``, and hands its result to parity;
- a scheduled run offers every staged part (also those a run that failed after staging did not
  offer) and writes what its own micro-batches emitted (stream.csv; an updating result: the
  whole result after the run, and its changes, changes.csv); it keeps what they left out
  (``late/upto-<batch>/``: late rows, (row, window) pairs, expired keys) for parity. A re-run
  of an interval rebuilds the same outputs from its recorded micro-batches.

A sweep run (a state command's: runs/compaction.py, runs/verify.py) offers its state sweep, if
any, and streams; its command reads what the stream did (it materializes nothing).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pyspark.sql import DataFrame, Observation, SparkSession
from pyspark.sql import functions as F

from operators_lib.catalog import TableDef
from operators_lib.changelog import ADDS, KINDS
from operators_lib.engine.stores import store_of
from operators_lib.io import offers
from operators_lib.io.output import copy_changelog, write_csv_frame, write_header, write_result
from operators_lib.io.sink_files import stage
from operators_lib.ops.reports import (
    BoundedRecord,
    BoundedReport,
    ProgressSummary,
    RecordedReport,
    StreamCounts,
    StreamReport,
    StreamSection,
)
from operators_lib.plan import (
    EMIT_TS,
    LATE,
    LATE_WINDOW,
    MARKERS,
    OP,
    PLACE,
    ROWNUM,
    SESSION_SPLIT,
    TTL,
    TTL_KEY,
    TTL_UPSTREAM,
    Filter,
    Node,
    Over,
    Project,
    Rank,
    SessionRows,
    WindowAggregate,
    append_only,
    find,
    first_row_dedup,
    late_tag,
    state_ttl,
)
from operators_lib.relational import WEND
from operators_lib.runs.spec import Listener, RunSpec, StreamProgress
from operators_lib.runs.staging import Run, columns_of, set_run_status
from operators_lib.scan import staged_schema
from operators_lib.state import lifecycle, result_store
from operators_lib.state.manifest import Manifest
from operators_lib.state.result_store import RESULT_ORDER
from operators_lib.stream.runner import (
    SPARK,
    SparkRuntime,
    StreamRun,
    changelog_files,
    changelog_frame,
    checkpoint_shuffle_partitions,
    last_commit,
)

LATE_ROW = "input_row"  # late.csv: the row's 0-based position in its table's (valid) input
# What ``late/upto-<batch>/`` keeps of a run's changelog: (column, changelog column, type).
LEFT_OUT = ((OP, OP, "string"), (ROWNUM, ROWNUM, "long"), (WEND, EMIT_TS, "long"),
            (TTL_KEY, TTL_KEY, "long"))


@dataclass
class Emitted:
    """What a scheduled run's micro-batches emitted (``_emit``): its stream report's counts."""

    emitted_rows: int
    changelog_rows: int
    late_rows: int
    late_row_windows: int
    session_splits: int


@dataclass
class Streamed:
    """What the materialize step leaves for the record and parity steps."""

    first_batch: int
    last_batch: int
    recorded: RecordedReport  # what the run's record keeps (state/lifecycle.record_run)
    late_rows: int
    # A bounded run's result, and what may explain a difference from batch: late rows per
    # table, (row, window end) pairs, the TTL_KEY hashes of keys whose state expired.
    final: DataFrame | None = None
    late: dict[str, DataFrame] = field(default_factory=dict)
    late_windows: DataFrame | None = None
    expired: DataFrame | None = None
    expired_upstream: bool = False


def offer(run: Run) -> None:
    """Offer each table's staged parts to the stream (module docstring), and a sweep run's
    state sweep (``spec.sweep``; it stages no parts)."""
    spec = run.spec
    if spec.sweep is not None:
        lifecycle.offer_sweep(spec.state, run.tables, spec.sweep)
    if spec.bounded:  # until the stream has ended and its changelog is checked: not resumable
        set_run_status(spec.state, run.fingerprint, "running")
    n = spec.stop_after_batches if spec.bounded else None  # None: all of them
    for key, parts in run.pool.items():
        ends = spec.bounded and (n is None or n >= len(parts) + 1)
        lifecycle.offer(spec.state, key, parts[:n], run.tables[key] if ends else None)


def stream(run: Run, spark: SparkSession, runtime: SparkRuntime = SPARK,
           listen: Listener | None = None) -> StreamRun:
    """Run the streaming query over what was offered (``runtime``: tests pass the operator
    harness); ``listen`` hears of its progress."""
    state, tables = run.spec.state, list(run.tables)
    srun = lifecycle.stream(spark, run.plan, state, tables if run.spec.bounded else sorted(tables),
                            run.rows_per_batch, runtime,
                            _input_read(state, tables, listen) if listen else None)
    if run.spec.bounded:
        run.report.timings_s["stream"] = round(srun.seconds, 3)
    return srun


def materialize(run: Run, spark: SparkSession, srun: StreamRun | None) -> Streamed:
    """The run's outputs from its micro-batches (module docstring); ``srun``: None for a
    scheduled re-run."""
    state = run.spec.state
    if run.recorded is not None:  # a re-run: the outputs of the interval's micro-batches
        record = run.recorded
        _emit(spark, run.plan, state, run.spec, record.first_batch, record.last_batch,
              record.replayed)
        run.report = record.stream_report.model_copy()
        run.report.rerun = True
        run.report.columns = columns_of(run.plan)  # (a record of an older twinflow has none)
        return Streamed(record.first_batch, record.last_batch, record.report, 0)
    # The run covers every micro-batch since the last recorded run, also those of a run that
    # failed after its stream step (they were never published), or, when the state was
    # replaced since (a rebuild), the new state's from its first.
    previous = lifecycle.previous_record(state, run.spec.key)
    generation = Manifest.load(state).generation
    run.replayed = previous is not None and previous.generation != generation
    first = previous.last_batch + 1 if previous and not run.replayed else 0
    last = last_commit(state / "checkpoint")
    if run.spec.bounded:
        return _bounded(run, spark, srun, first, last)
    emitted = _emit(spark, run.plan, state, run.spec, first, last, run.replayed)
    before = previous.stream_report if previous else StreamReport()
    progress = srun.progress[-1] if srun.progress else {}
    report = run.report
    report.micro_batches, report.stream_seconds = srun.micro_batches, round(srun.seconds, 3)
    report.emitted_rows, report.changelog_rows = emitted.emitted_rows, emitted.changelog_rows
    report.late_rows, report.late_row_windows = emitted.late_rows, emitted.late_row_windows
    report.session_splits = emitted.session_splits
    report.emitted_rows_total = emitted.emitted_rows + (
        before.emitted_rows_total if append_only(run.plan) else 0)
    # A replay emits the split markers of all the input again.
    report.session_splits_total = emitted.session_splits + (
        0 if run.replayed else before.session_splits_total)
    report.input_rows_total = Manifest.load(state).staged_rows
    # (Spark's progress: its own JSON)
    report.watermark = (progress.get("eventTime") or {}).get("watermark")
    report.state_rows = sum(o.get("numRowsTotal", 0) for o in progress.get("stateOperators", []))
    # Spark keeps a checkpoint's shuffle partitions: the count in force, not the session's.
    report.shuffle_partitions = checkpoint_shuffle_partitions(state / "checkpoint")
    return Streamed(first, last, report, emitted.late_rows)


def _bounded(run: Run, spark: SparkSession, srun: StreamRun, first: int, last_batch: int
             ) -> Streamed:
    """A bounded run's changelog.csv, stream.csv and late.csv, into ``pending/``."""
    plan, state = run.plan, run.spec.state
    report: BoundedReport = run.report
    types = {f.name: f.type for f in plan.fields}
    columns = [f.name for f in plan.fields]
    kept = checkpoint_shuffle_partitions(state / "checkpoint")
    if kept is not None and kept != report.spark.shuffle_partitions:
        # A resumed stream keeps the partitioning its state was written with.
        report.spark.stream_shuffle_partitions = kept
        report.warnings.append(
            f"the resumed stream keeps the {kept} shuffle partitions its checkpoint was "
            f"written with (spark.sql.shuffle.partitions is "
            f"{report.spark.shuffle_partitions} in this session)")
    log = result_store.changelog(spark, plan, state)
    # Each row kind's count, counted while the changelog is copied; a result that nothing
    # retracted (an append-only one, or an updating one none of whose rows changed: a join or
    # GROUP BY in one micro-batch) is the changelog's added rows, copied beside it.
    pending = run.pending
    kinds = copy_changelog(
        changelog_files(state / "changelog", state / "checkpoint"),
        (pending / "changelog.csv", ["op", *columns]), (pending / "stream.csv", columns))
    done = lifecycle.input_ended(state, list(run.tables))
    if not result_store.retracts(plan, kinds):
        final, stream_rows = log.where(F.col(OP).isin(*ADDS)), kinds["rows"]
    else:
        # From the whole changelog, as changelog.csv (no snapshot that could hide damage);
        # stream.csv replaced.
        final = result_store.result_rows(spark, state, last_batch,
                                         result_store.result_schema(plan, log),
                                         into=pending / ".result")
        stream_rows = write_csv_frame(final, pending / "stream.csv", types, columns,
                                      order=[RESULT_ORDER])["rows"]
    set_run_status(state, run.fingerprint, "complete" if done else "stopped")
    late = _late_rows(log, plan, run.tables) if kinds[LATE] else {}
    late_count = _write_late_csv(spark, pending / "late.csv", run.tables, run.pool, late)
    late_windows = log.where(F.col(OP) == LATE_WINDOW).select(
        ROWNUM, F.col(EMIT_TS).alias(WEND)).distinct() if kinds[LATE_WINDOW] else None
    expired = log.where(F.col(OP) == TTL).select(TTL_KEY).distinct() if kinds[TTL] else None
    counts = StreamCounts(
        complete=done, micro_batches_this_run=srun.micro_batches,
        changelog_rows=kinds["rows"], rows=stream_rows, late_rows=late_count,
        late_row_windows=0 if late_windows is None else late_windows.count(),
        session_splits=kinds[SESSION_SPLIT],
        ttl_expired_keys=(0 if expired is None else expired.count()) if state_ttl(plan)
        else None)
    run.written += ["changelog.csv", "stream.csv", "late.csv"]
    if run.discarded:
        counts.recomputed_from_scratch = run.discarded
    progress = _progress_summary(srun.progress)
    report.stream = StreamSection(**counts.as_json(), last_progress=progress)
    recorded = BoundedRecord(**counts.as_json(), interval=run.spec.key,
                             watermark=progress.watermark)
    if not done:
        report.stream.note = (f"stopped after {run.spec.stop_after_batches} micro-batch(es); "
                              "run again with the same arguments to resume")
    return Streamed(first, last_batch, recorded, late_count, final, late, late_windows,
                    expired, bool(kinds[TTL_UPSTREAM]))


def _emit(spark: SparkSession, plan: Node, state: Path, spec: RunSpec, first: int, upto: int,
          replayed: bool) -> Emitted:
    """A scheduled run's outputs from its micro-batches ``first`` .. ``upto`` (module
    docstring), in its publishing format (output.write_result): stream, and changes for an
    updating result (as CSV copied from the changelog's lines: output.copy_changelog; an
    updating result is merged and written by the executors),
    and the rows the stream left out, kept in the state for later parity
    (``late/upto-<batch>/``). ``replayed``: the state was rebuilt from the retained input since
    the previous run; an append-only result then leaves out the rows the retired state had
    emitted (published before)."""
    run_dir, fmt = spec.out, spec.publish_format
    run_dir.mkdir(parents=True, exist_ok=True)
    columns = [f.name for f in plan.fields]
    types = {f.name: f.type for f in plan.fields}
    log = result_store.changelog(spark, plan, state, first, upto)
    if first > upto:  # no micro-batch: the left-out rows up to ``upto`` are a previous run's
        kinds = {k: 0 for k in (*KINDS, *MARKERS)}
    else:
        # The run's late rows, (row, window end) pairs and expired keys, kept: parity needs
        # those of every run. The job that writes them counts each row kind.
        counted = Observation()
        log.observe(counted, *result_store.kind_counts()) \
            .where(F.col(OP).isin(LATE, LATE_WINDOW, TTL, TTL_UPSTREAM)) \
            .select(*[(F.col(src) if src in log.columns else F.lit(None)).cast(t).alias(c)
                      for c, src, t in LEFT_OUT]) \
            .write.mode("overwrite").parquet(str(state / "late" / f"upto-{upto:08d}"))
        kinds = counted.get
    result_store.retracts(plan, kinds)
    batches = changelog_files(state / "changelog", state / "checkpoint", first, upto)
    changes = log.where(~F.col(OP).isin(*MARKERS))
    appended = emitted_rows(spark, plan, state, changes, replayed) if append_only(plan) \
        else None
    if appended is not None and (replayed or fmt != "csv"):
        emitted = write_result(appended, run_dir / "stream", fmt, types, columns, list(PLACE))
    elif appended is not None:
        emitted = copy_changelog(batches, None, (run_dir / "stream.csv", columns))["rows"]
    else:
        if fmt == "csv":
            copy_changelog(batches, (run_dir / "changes.csv", ["op", *columns]))
        else:
            write_result(changes.withColumnRenamed(OP, "op"), run_dir / "changes", fmt,
                         types, ["op", *columns], list(PLACE))
        rows = result_store.result_rows(spark, state, upto,
                                        result_store.result_schema(plan, log))
        emitted = write_result(rows, run_dir / "stream", fmt, types, columns, [RESULT_ORDER])
    if spec.sink is not None:  # (an append-only result: lifecycle.insert_only)
        stage(appended, spec.sink, store_of(spark), spec.key,
              [(f.name, f.type) for f in plan.fields], list(PLACE), run_dir)
    return Emitted(emitted, sum(kinds[k] for k in KINDS), kinds[LATE], kinds[LATE_WINDOW],
                   kinds[SESSION_SPLIT])


def emitted_rows(spark: SparkSession, plan: Node, state: Path, changes: DataFrame,
                 replayed: bool) -> DataFrame:
    """An append-only query's emitted rows: after a replay, without those the retired state
    had emitted (they were published before)."""
    if not replayed:
        return changes
    retired = changelog_frame(spark, state / "retired" / "changelog",
                              state / "retired" / "checkpoint")
    if retired is None:
        return changes
    identity = result_identity(plan)
    return changes.join(retired.where(F.col(OP).isin(*ADDS)).select(*identity).distinct(),
                        identity, "left_anti")


def result_identity(plan: Node) -> list[str]:
    """The columns that pair an emitted row with its batch row. A window aggregate's result
    row is its key's window: its first input row and its end - 1 (``EMIT_TS`` in both modes),
    since a HOP or CUMULATE row can be the first of several windows that fire at different
    runs. Every other result row: its input row."""
    while isinstance(plan, (Filter, Project)):
        plan = plan.child
    return [ROWNUM, EMIT_TS] if isinstance(plan, WindowAggregate) else [ROWNUM]


def late_source(plan: Node) -> TableDef | None:
    """The table whose late rows an operator drops: OVER's, a window aggregate's, or a
    keep-first deduplication's by event time (queries with such an operator read one table)."""
    for node in (find(plan, Over) + find(plan, WindowAggregate) + find(plan, SessionRows)
                 + find(plan, Rank)):
        drops = not isinstance(node, Rank) or first_row_dedup(node) or node.windowed == "rows"
        if drops and node.source is not None:
            return node.source
    return None


def late_tags(plan: Node, tables: dict[str, TableDef]) -> dict[int, str]:
    """In a query over several tables, the table (its key) each tag of a late row's marker
    names (its ``EMIT_TS``: plan.late_tag; 0: ``late_source``'s)."""
    tags = {late_tag(t.name): k for k, t in tables.items()}
    source = late_source(plan)
    if source is not None:
        tags[0] = source.name.lower()
    return tags


def _late_rows(log: DataFrame, plan: Node, tables: dict[str, TableDef]) -> dict[str, DataFrame]:
    """The late rows of each table that has some (their ``ROWNUM``; a self-join reports a late
    row once per side). A query over several tables drops late rows in window operators only,
    whose markers name the table (``tw__ts``: plan.late_tag); one table's late rows are its
    own."""
    late = log.where(F.col(OP) == LATE)
    if len(tables) == 1:
        return {k: late.select(ROWNUM) for k in tables}
    tags = late_tags(plan, tables)
    seen = {r[EMIT_TS] for r in late.select(EMIT_TS).distinct().collect()}  # a tag per table
    if seen - set(tags):
        raise RuntimeError(f"late rows (tags {seen - set(tags)}) that name no table")  # a bug
    return {k: late.where(F.col(EMIT_TS).isin(*[g for g, n in tags.items() if n == k]))
            .select(ROWNUM) for k in tables if any(tags[g] == k for g in seen)}


def _write_late_csv(spark: SparkSession, path: Path, tables: dict[str, TableDef],
                    pool: dict[str, list[Path]], late: dict[str, DataFrame]) -> int:
    """late.csv: each late row of its table as staged, with its 0-based input position; returns
    their number."""
    picked = None
    for key, rows in late.items():
        if not pool[key]:
            continue
        table = tables[key]
        part = spark.read.schema(staged_schema(table)).parquet(*map(str, pool[key])).join(
            rows, ROWNUM, "left_semi").select(
            F.lit(table.name).alias("table"), *[c.name for c in table.physical],
            F.col(ROWNUM).alias(LATE_ROW))
        picked = part if picked is None else picked.unionByName(part, allowMissingColumns=True)
    if picked is None:  # no late rows: no Spark job
        write_header(path, ["table", LATE_ROW])
        return 0
    types = {c.name: c.type for t in tables.values() for c in t.physical}
    return write_csv_frame(picked, path, types, picked.columns, order=["table", LATE_ROW])["rows"]


def _input_read(state: Path, tables: list[str], listen: Listener) -> Callable[[dict], None]:
    """A stream progress callback reporting the share of the offered input files read (the file
    source reads one per micro-batch: its offset is the count read, minus one)."""
    offered = sum(len(offers.offered(state / "staged" / t)) for t in tables)

    def on_progress(progress: dict) -> None:
        read = {s["description"]: json.loads(s["endOffset"])["logOffset"] + 1
                for s in progress["sources"] if s.get("endOffset")}  # a self-join: one source
        listen("stream_progress", StreamProgress(
            progress["batchId"], min(1.0, sum(read.values()) / max(offered, 1))))
    return on_progress


def _progress_summary(progress: list[dict]) -> ProgressSummary:
    """The last of Spark's progress reports (their JSON is Spark's), and the rows read."""
    if not progress:
        return ProgressSummary()
    last = progress[-1]
    ops = last.get("stateOperators") or []
    return ProgressSummary(
        batch_id=last.get("batchId"),
        watermark=(last.get("eventTime") or {}).get("watermark"),
        # Spark's count of the rows its sources read: the end-of-input markers included.
        input_rows_total=sum(p.get("numInputRows", 0) for p in progress),
        state_rows=sum(o.get("numRowsTotal", 0) for o in ops),
        state_memory_bytes=sum(o.get("memoryUsedBytes", 0) for o in ops))


def write_stream_report(run: Run, seconds: float) -> None:
    """A scheduled run's stream_report.json (what its gate and publish read), with how long
    its stream task took."""
    run.report.seconds = round(seconds, 3)
    run.report.save(run.spec.out)
