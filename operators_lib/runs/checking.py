"""The parity step of every run: the stream's result against batch over the same staged
input, as Spark jobs (the driver holds counts, not rows). Where runs differ, a parameter says:

- a bounded run (``twinflow run``, both modes) compares whole results (parity/verdict.py:
  empty input, state TTL, late rows and SESSION splits explain a difference);
- a scheduled run's parity (``whole`` False) compares what the run emitted. OVER and
  keep-first deduplication by event time (one table): every emitted row must equal its batch
  row; the other input rows are late or still pending behind the watermark. Joins, GROUP BY
  and TopN emit every change at once: the materialized changelog must equal the batch result
  over the same input. A window aggregate emits each key's window once, when it fires: every
  emitted window must equal its batch row over the input without the late rows (and (row,
  window) pairs); the other batch rows are windows still pending. The batch reads the staged
  input the run's results can reach (parity/scope.py): from a cut for OVER RANGE INTERVAL and
  TUMBLE/HOP/CUMULATE windows; the rows of the keys the run touched where the one stateful
  operator is keyed by columns the result shows; all of it otherwise;
- the audit (``whole`` True) compares every row the stream emitted up to its newest run with
  batch over all input retained by then. It also catches what a run's own parity cannot: a row
  emitted by two runs, and (OVER and window aggregates by event time) an on-time row or window
  the watermark has passed that no run emitted. It reads only what the newest recorded run
  committed, so it may run while a query run streams.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from operators_lib.batch import batch_dataframe
from operators_lib.errors import InputError, ParityError
from operators_lib.io import storage
from operators_lib.io.output import write_result
from operators_lib.ops import history
from operators_lib.ops.reports import ParityInput, ParityReport, StreamSection, Unemitted
from operators_lib.parity.compare import (
    SAMPLE,
    compare_frames,
    not_comparable,
    session_splits_differ,
)
from operators_lib.parity.scope import cut_ms, key_scope, parts_from, reach_ms, time_operator
from operators_lib.parity.verdict import FAILED, Explanations, verdict
from operators_lib.plan import (
    EMIT_TS,
    LATE,
    LATE_WINDOW,
    MARKERS,
    OP,
    ROWNUM,
    TTL,
    TTL_KEY,
    TTL_UPSTREAM,
    Node,
    Over,
    WindowAggregate,
    append_only,
    scans,
    source_tables,
    state_ttl,
)
from operators_lib.relational import WEND
from operators_lib.runs.spec import Outcome, RunSpec
from operators_lib.runs.staging import Run
from operators_lib.runs.streaming import (
    LEFT_OUT,
    Streamed,
    emitted_rows,
    late_source,
    result_identity,
)
from operators_lib.scan import staged_schema
from operators_lib.state import lifecycle, result_store
from operators_lib.state.lifecycle import RunRecord
from operators_lib.state.result_store import result_rows


def recorded(spec: RunSpec, whole: bool) -> RunRecord:
    """The record of the run a scheduled parity checks: the interval's (``whole``: the
    newest run's, for the audit)."""
    if whole:
        keys = lifecycle.run_keys(spec.state)
        if not keys:
            raise InputError(f"query {spec.name}: no run to audit yet")
        return lifecycle.run_record(spec.state, keys[-1])
    record = lifecycle.run_record(spec.state, spec.key)
    if record is None:
        raise InputError(f"query {spec.name}: interval {spec.key} has no completed stream "
                         "step (stream_increment) to check")
    return record


def parity(run: Run, spark: SparkSession, streamed: Streamed | None, batch: DataFrame | None,
           whole: bool = False) -> Outcome:
    """The parity of the run (module docstring): a bounded run's of its ``streamed`` result
    against its ``batch`` one (exit 1 and the difference if they differ); a scheduled run's of
    what it emitted (``whole``: of everything emitted, the audit), in parity.json or
    audit.json (a ParityError if they differ)."""
    if not run.spec.bounded:
        return Outcome(0, _check(run, spark, whole))
    spec, plan, report = run.spec, run.plan, run.report
    outcome = Outcome(0)
    exempt = not_comparable(plan)
    if spec.mode != "both":
        report.parity = ParityReport(verdict="not_run", reason=f"mode {spec.mode}")
    elif exempt:
        report.parity = ParityReport(verdict="not_applicable", reason=exempt)
    elif not report.stream.complete:
        report.parity = ParityReport(verdict="not_run", reason="the stream run is not complete")
    else:
        report.parity, outcome.exit_code, outcome.message = _whole_result(
            spark, plan, run.pool, batch, streamed, report.stream)
    if streamed is not None:
        history.record_outcome(spec.state, spec.key, parity=report.parity.verdict)
    outcome.report = report
    return outcome


def _whole_result(spark: SparkSession, plan: Node, pool: dict[str, list[Path]], batch: DataFrame,
            streamed: Streamed, counts: StreamSection) -> tuple[ParityReport, int, str]:
    """The parity verdict, exit code and message; ``counts``: the stream step's report."""
    late, late_windows = streamed.late, streamed.late_windows
    on_time = (lambda: batch_dataframe(spark, plan, pool, late, late_windows)) if (
        late or late_windows is not None) else None
    result, diff = verdict(plan, batch, streamed.final, {f.name: f.type for f in plan.fields},
                           [f.name for f in plan.fields], Explanations(
                               streamed.expired, streamed.expired_upstream, on_time,
                               counts.late_rows, counts.late_row_windows,
                               counts.session_splits))
    if result.verdict != FAILED:
        return result, 0, ""
    lines = ["parity failed: stream and batch results differ"]
    for label, rows in (("only in batch", diff.only_batch), ("only in stream", diff.only_stream)):
        for r in rows[:10]:
            lines.append(f"  {label}: {r}")
    return result, 1, "\n".join(lines)


def _check(run: Run, spark: SparkSession, whole: bool) -> ParityReport:
    """Parity of the run of ``run.recorded`` (``whole``: of everything emitted up to it)."""
    spec, plan, record, out = run.spec, run.plan, run.recorded, run.spec.out
    state = spec.state
    exempt = not_comparable(plan)
    if exempt:
        report = ParityReport(verdict="not_applicable", reason=exempt)
        _report(out, whole, report)
        return report
    waits = late_source(plan) is not None  # results wait for the watermark
    unemitted = None
    if waits and len(scans(plan)) != 1:
        raise InputError("incremental parity for OVER / keep-first deduplication is implemented "
                         "for single-table queries")
    tables = sorted(source_tables(plan))
    files = lifecycle.staged_as_of(state, record, tables)
    columns = [f.name for f in plan.fields]
    types = {f.name: f.type for f in plan.fields}
    stream = _run_result(spark, plan, state, record, whole, out)
    input_rows = sum(record.rows.get(t, 0) for t in tables)
    scope = None if whole else _touched(spark, plan, state, record, files, stream, waits)
    keep = None if scope is None else scope[0]
    if waits:
        key = tables[0]
        late, late_windows = _late_so_far(spark, state, record.last_batch)
        identity = result_identity(plan)
        cut = None if whole else _parity_cut(plan, state, record, key, files[key])
        if cut is not None:
            files[key] = parts_from(files[key], scans(plan)[0].table.watermark.column, cut)
        # Batch over the on-time input: the stream dropped the late rows (and left rows out
        # of windows that had fired) by Flink's rules.
        full = batch_dataframe(spark, plan, files, None if late is None else {key: late},
                               late_windows, keep).persist()
        try:
            ids = stream.select(*identity).distinct()
            # batch.csv: the batch's version of the run's output
            batch = full.join(ids, identity, "left_semi")
            diff = compare_frames(batch, stream, types, columns)
            now = record.watermark
            now = -2**63 if now is None else pd.Timestamp(now).value // 1_000_000
            if len(identity) > 1:  # windows still open: their end - 1 is past the watermark
                pending_windows = full.where(F.col(EMIT_TS) > now).count()
            if whole:
                unemitted = _unemitted(plan, full, ids, identity, now, columns)
            else:
                write_result(batch, out / "batch", spec.publish_format, types, columns,
                             [EMIT_TS, ROWNUM])
        finally:
            full.unpersist()
        late_count = 0 if late is None else late.count()
        parity_input = ParityInput(
            from_event_time=None if cut is None else str(pd.Timestamp(cut, unit="ms")),
            staged_parts=len(files[key]))
        if scope is not None:
            parity_input.touched_keys, parity_input.key = scope[2].touched_keys, scope[2].key
        report = ParityReport(verdict="equal_for_emitted_rows" if diff.equal else "failed",
                              late_rows=late_count, parity_input=parity_input)
        counts = record.stream_report
        total = counts.emitted_rows_total
        emitted = total if whole else counts.emitted_rows
        if len(identity) > 1:  # a window's row stands for its key's window, not an input row
            report.emitted_windows, report.emitted_windows_total = emitted, total
            report.pending_windows = pending_windows
            report.late_row_windows = 0 if late_windows is None else late_windows.count()
        else:
            report.emitted_rows, report.emitted_rows_total = emitted, total
            report.pending_rows = input_rows - late_count - total
        if unemitted is not None:
            report.unemitted_behind_watermark = unemitted
            if unemitted.rows:
                report.verdict = "failed"
        splits = counts.session_splits_total
        if not diff.equal and splits:  # as in `twinflow run`
            split = session_splits_differ(splits)
            report.verdict, report.session_splits = split.verdict, split.session_splits
            report.reason = split.reason
    else:
        if scope is not None:  # the result of the keys the run touched (the others kept theirs)
            stream = scope[1]
        batch = batch_dataframe(spark, plan, files, keep_keys=keep).persist()
        try:
            report, diff = verdict(plan, batch, stream, types, columns,
                                   _explanations(spark, plan, state, record))
            if not whole:
                write_result(batch, out / "batch", spec.publish_format, types, columns,
                             [c for c in (EMIT_TS, ROWNUM) if c in batch.columns])
            if scope is not None:
                report.parity_input = scope[2]
        finally:
            batch.unpersist()
    report.input_rows = input_rows
    report.add_diff(diff.summary())
    if whole:
        report.interval, report.last_batch = record.interval, record.last_batch
    _report(out, whole, report)
    storage.rmtree(out / ".result")  # the audit's merged result, if any
    if whole:
        history.record_audit(state, record.interval, report.verdict)
    else:
        history.record_outcome(state, record.interval, parity=report.verdict)
    if report.verdict == "failed":
        unemitted = report.unemitted_behind_watermark
        lost = None if unemitted is None else unemitted.rows
        raise ParityError(f"query {spec.name}: stream and batch differ"
                          f"{' (audit)' if whole else ''}: {diff.summary(3).as_json()}"
                          + (f"; {lost} row(s) behind the watermark never emitted: "
                             f"{unemitted.sample[:3]}" if lost else ""))
    return report


def _touched(spark: SparkSession, plan: Node, state: Path, record: RunRecord,
             files: dict[str, list[Path]], stream: DataFrame, waits: bool
             ) -> tuple[dict[str, DataFrame], DataFrame, ParityInput] | None:
    """A run's parity over the keys it touched (parity_scope.key_scope): per table the key
    values whose rows batch reads, the run's result restricted to them, and what the report
    says of them; None where all input is compared (no key scope, the first run, a replay)."""
    scope = key_scope(plan)
    previous = lifecycle.previous_record(state, record.interval)
    if scope is None or previous is None or record.replayed:
        return None
    names = [f"tw__key{i}" for i in range(len(scope.output))]
    shown_keys = stream.select(*[stream[c].alias(n) for c, n in zip(scope.output, names)])
    if waits:  # the keys of the rows it emitted (some arrived in earlier runs)
        touched = shown_keys
    else:  # the keys of its new input rows
        touched = None
        tables = source_tables(plan)
        for table, cols in scope.inputs.items():
            new = [str(p) for p in files[table][previous.parts.get(table, 0):]]
            if new:
                keys = spark.read.schema(staged_schema(tables[table])).parquet(*new).select(
                    *[F.col(f"`{c}`").alias(n) for c, n in zip(cols, names)])
                touched = keys if touched is None else touched.unionByName(keys)
        if touched is None:  # no new input: every result row is as before
            touched = shown_keys.limit(0)
    touched = touched.distinct()
    shown = stream.join(touched, [stream[c].eqNullSafe(touched[n])
                                  for c, n in zip(scope.output, names)], "left_semi")
    keep = {table: touched.toDF(*cols) for table, cols in scope.inputs.items()}
    return keep, shown, ParityInput(touched_keys=touched.count(), key=list(scope.output))


def _report(out: Path, whole: bool, report: ParityReport) -> None:
    if whole:
        report.save_audit(out)
    else:
        report.save(out)


def _unemitted(plan: Node, full: DataFrame, ids: DataFrame, identity: list[str], now: int,
               columns: list[str]) -> Unemitted | None:
    """On-time batch rows (windows) that the watermark ``now`` has passed and the stream never
    emitted (``ids``: the identities it emitted): lost rows. None where a batch row has no
    emission time (deduplication)."""
    node = time_operator(plan)
    if not isinstance(node, (Over, WindowAggregate)) or node.time_kind != "rowtime":
        return None
    lost = full.join(ids, identity, "left_anti").where(F.col(EMIT_TS) <= now)
    sample = [[None if v is None else str(v) for v in r]
              for r in lost.select(*columns).limit(SAMPLE).collect()]
    return Unemitted(rows=lost.count(), sample=sample)


def _run_result(spark: SparkSession, plan: Node, state: Path, record: RunRecord, whole: bool,
                out: Path) -> DataFrame:
    """What the run of ``record`` published in stream.csv, as a DataFrame; ``whole``: every
    row the state's stream emitted up to that run (an updating query: its result, merged into
    ``out``: the audit, which may run beside a query run, does not write the store)."""
    last = record.last_batch
    if not append_only(plan):  # the columns of one micro-batch's changelog suffice
        return result_rows(spark, state, last, result_store.result_schema(
            plan, result_store.changelog(spark, plan, state, last, last)),
            into=out / ".result" if whole else None)
    log = result_store.changelog(spark, plan, state, 0 if whole else record.first_batch, last)
    return emitted_rows(spark, plan, state, log.where(~F.col(OP).isin(*MARKERS)),
                    record.replayed and not whole)


def _parity_cut(plan: Node, state: Path, record: RunRecord, table: str, parts: list[Path]
                ) -> int | None:
    """The earliest event time the run's parity needs (parity_scope.py); None: all input."""
    previous = lifecycle.previous_record(state, record.interval)
    if previous is None or record.replayed or reach_ms(plan) is None:
        return None
    time_col = scans(plan)[0].table.watermark.column
    new_parts = parts[previous.parts.get(table, 0):]
    return cut_ms(plan, previous.watermark, new_parts, time_col)


def _left_out(spark: SparkSession, state: Path, upto: int) -> DataFrame | None:
    """What the micro-batches of every run up to ``upto`` left out (``_emit``): rows by kind
    (OP) with ROWNUM, WEND and TTL_KEY; None: nothing."""
    kept = [str(d) for d in (state / "late").glob("upto-*")
            if int(d.name.removeprefix("upto-")) <= upto]
    schema = ", ".join(f"{c} {t}" for c, _, t in LEFT_OUT)
    return spark.read.schema(schema).parquet(*kept) if kept else None


def _late_so_far(spark: SparkSession, state: Path, upto: int
                 ) -> tuple[DataFrame | None, DataFrame | None]:
    """The late rows and (row, window end) pairs of every run up to micro-batch ``upto``."""
    left_out = _left_out(spark, state, upto)
    if left_out is None:
        return None, None
    return (left_out.where(F.col(OP) == LATE).select(ROWNUM),
            left_out.where(F.col(OP) == LATE_WINDOW).select(ROWNUM, WEND))


def _explanations(spark: SparkSession, plan: Node, state: Path, record: RunRecord) -> Explanations:
    """The keys whose state expired in any run up to the one of ``record`` (state TTL): what
    may explain where an updating result differs from batch."""
    left_out = _left_out(spark, state, record.last_batch)
    if left_out is None or not state_ttl(plan):
        return Explanations()
    counts = {r[OP]: r["count"] for r in left_out.groupBy(OP).count().collect()}
    return Explanations(
        left_out.where(F.col(OP) == TTL).select(TTL_KEY).distinct() if counts.get(TTL) else None,
        bool(counts.get(TTL_UPSTREAM)))
