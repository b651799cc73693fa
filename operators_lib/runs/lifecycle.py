"""One lifecycle for every run: ``run(spec, spark, steps)``, the one entry point of
``twinflow run`` (jobs/cli.py, the demo, the warm-up), of every DAG task
(jobs/twinflow_job.py: stream increment, batch parity, audit, backfill; jobs/gates.py: publish)
and of the state commands' sweep runs (runs/compaction.py, runs/verify.py: ``twinflow state
compact|verify`` and their DAG tasks).

The steps, each in one place; a run takes those its ``Steps`` ask for, in this order::

    stage        runs/staging.py     parse and stage the input it brings
    offer        runs/streaming.py   offer the staged parts (and a bounded input's end), or a
                                     sweep run's state sweep
    stream       runs/streaming.py   the streaming query from the checkpoint (availableNow)
    materialize  runs/streaming.py   the run's outputs from its changelog
    record       runs/recording.py   the run record and the metrics history
    (batch)      here                a bounded run's batch mode, batch.csv
    parity       runs/checking.py    the result against batch
    publish      runs/publishing.py  the outputs into place

Where bounded runs (``RunSpec.bounded``: one interval plus the end of input) and scheduled
ones differ, the step takes it as a parameter; each module's docstring says how. A sweep run
(``Steps.SWEEP``) takes the offer and stream steps only, with the plan its state command made
of the query the state records (``RunSpec.sweep``: the sweep it offers).

Order of work, so that bad input fails before anything is written (exit 2, nothing
half-written): the spec is checked without Spark (``check``: the SQL parsed, once), the script
planned, every input file and header checked and its rows parsed on the executors (staging)
before anything is staged. A bounded run's output files are written into ``_state/pending/``
and move into place once the run has ended (a run that fails leaves the previous outputs as
they were).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import replace

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession

from operators_lib.batch import batch_dataframe
from operators_lib.engine.spark import engine_failures
from operators_lib.engine.stores import store_of
from operators_lib.errors import InputError, SqlError
from operators_lib.io import storage, uris
from operators_lib.io.output import write_csv_frame
from operators_lib.io.sink_files import sink_of, stage
from operators_lib.io.storage import bound, is_local, reachable
from operators_lib.ops.reports import BatchCount
from operators_lib.plan import (
    EMIT_TS,
    PLACE,
    ROWNUM,
    Node,
    append_only,
    batch_only,
    processing_time_windows,
    source_tables,
)
from operators_lib.runs import binding, checking, publishing, recording, staging, streaming
from operators_lib.runs.backfill import backfill
from operators_lib.runs.query_config import QueryConfig
from operators_lib.runs.sources import sources
from operators_lib.runs.spec import MODES, Listener, Outcome, RunSpec, Steps
from operators_lib.sql import Script, load_script
from operators_lib.sql.script import UDF_ERRORS
from operators_lib.state import lifecycle
from operators_lib.state.lifecycle import RunRecord
from operators_lib.state.queries import plan_query
from operators_lib.stream.runner import SPARK, SparkRuntime, StreamRun
from operators_lib.udf.rejects import guards

# The steps that stage and stream: they hold the state (a sweep run's state command holds it).
_STREAMING = (Steps.RUN, Steps.STREAM)
_NO_SQL = (Steps.PUBLISH, Steps.SWEEP)  # nothing to parse: published outputs, a given plan


def run(spec: RunSpec, spark: SparkSession | Callable[[], SparkSession] | None,
        steps: Steps = Steps.RUN, listen: Listener | None = None,
        runtime: SparkRuntime = SPARK, plan: Node | None = None) -> Outcome:
    """Run ``steps`` of the run ``spec`` (module docstring). ``spark``: the session, or how to
    start it once the spec is checked (the CLI: a mistake is reported before the JVM starts);
    None for the publish step. ``listen``: hears of a bounded run's steps; ``runtime``: how
    the stream runs (stream/runner.py; tests pass the operator harness); ``plan``: a sweep
    run's. A scheduled run's parity that fails raises ParityError; a bounded run's ends with
    exit code 1."""
    script = check(spec) if steps not in _NO_SQL else None
    if script is not None:
        spec = replace(spec, sink=sink_of(script.sink))
    if callable(spark):
        spark = spark()
    if spark is not None and not (is_local(spec.out) and is_local(spec.state)):
        store = store_of(spark)  # the session's settings reach the store
        spec = replace(spec, out=reachable(bound(spec.out, store), "--out"),
                       state=bound(spec.state, store))
    with engine_failures(spec.out if spec.bounded else None):
        with lifecycle.locked(spec.state) if steps in _STREAMING else nullcontext():
            return _steps(spec, spark, steps, script, plan, listen, runtime)


def check(spec: RunSpec) -> Script:
    """What can be checked without Spark: the SQL parses (the script returned is the one the
    run plans); a bounded run's every --data names a declared table and its options are in
    range."""
    script = load_script(list(spec.sql))
    if not spec.bounded:
        return script
    for name, path in spec.inputs.items():
        uris.location(path, f"--data {name}")
    declared = set(script.catalog.tables)
    unknown = sorted({k.lower() for k in spec.inputs} - declared)
    if unknown:
        raise InputError(f"--data for undeclared table(s): {', '.join(unknown)} "
                         f"(declared: {', '.join(sorted(declared))})")
    if spec.mode not in MODES:
        raise InputError(f"--mode must be one of {', '.join(MODES)}, got {spec.mode}")
    for option, value in (("--rows-per-batch", spec.rows_per_batch),
                          ("--stop-after-batches", spec.stop_after_batches)):
        if value is not None and value < 1:
            raise InputError(f"{option} must be at least 1, got {value}")
    return script


def _steps(spec: RunSpec, spark: SparkSession, steps: Steps, script: Script | None,
           plan: Node | None, listen: Listener | None, runtime: SparkRuntime) -> Outcome:
    t0 = time.perf_counter()
    notify = listen if listen and spec.bounded else (lambda step, info: None)
    if steps is Steps.BACKFILL:
        return Outcome(0, backfill(spec, spark, plan_for(spec, script, spark)))
    if steps is Steps.SWEEP:
        sweep = staging.Run(spec, plan, t0, rows_per_batch=spec.rows_per_batch)
        return Outcome(0, stream=_offer_and_stream(sweep, spark, runtime, listen))
    run = outcome = streamed = srun = batch = None
    if steps is not Steps.PUBLISH:
        plan, recorded = _planned(spec, spark, steps, script)
        run = staging.Run(spec, plan, t0, recorded=recorded)
        outcome = Outcome(0, run.report)
    if steps in _STREAMING:
        run = staging.stage(spec, spark, plan, recorded, t0)
        outcome.report = run.report
        notify("ingest", run.report)
        if spec.bounded:  # its outputs are written here until they move into place
            storage.rmtree(run.pending)
        if run.streams:
            srun = _offer_and_stream(run, spark, runtime, listen)
        if run.streams or run.recorded is not None:
            streamed = streaming.materialize(run, spark, srun)
        if not spec.bounded:
            streaming.write_stream_report(run, time.perf_counter() - t0)
            outcome.report = run.report
        if srun is not None:
            recording.record(run, srun, streamed)
            notify("stream", run.report)
    if run is not None and run.batches:
        batch = _batch(run, spark)
        notify("batch", run.report)
    if steps in (Steps.RUN, Steps.PARITY, Steps.AUDIT):
        outcome = checking.parity(run, spark, streamed, batch, whole=steps is Steps.AUDIT)
        notify("parity", run.report)
    if spec.bounded and spec.sink is not None and steps is Steps.RUN:
        _stage_sink(run, spark, outcome, streamed, batch)
    if steps in (Steps.RUN, Steps.PUBLISH):
        published = publishing.publish(spec, run)
        outcome = outcome or Outcome(0)
        outcome.published = published
    if batch is not None:
        batch.unpersist()
    return outcome


def _offer_and_stream(run: staging.Run, spark: SparkSession, runtime: SparkRuntime,
                      listen: Listener | None) -> StreamRun:
    """The offer and stream steps, of every run that streams (a sweep run's too)."""
    streaming.offer(run)
    return streaming.stream(run, spark, runtime, listen)


def plan_for(spec: RunSpec | QueryConfig, script: Script, spark: SparkSession,
             split: int | None = None) -> Node:
    """A scheduled query's plan from its parsed SQL (``script``: of ``spec.sql``), with its
    TopNs split by ``split`` (default: the spec's factor); refused where a scheduled run
    cannot run it."""
    plan = plan_query(script, spark, spec.topn_split if split is None else split)
    if isinstance(spec, RunSpec):
        insert_only(spec, plan)
    for over in batch_only(plan)[:1]:
        raise SqlError(f"query {spec.name}: an OVER ordered by {over.order_by}, "
                       "which is no time attribute, exists in batch mode only; a scheduled "
                       "query runs as a stream")
    if guards(plan):
        raise SqlError(f"query {spec.name}: '{UDF_ERRORS}' = 'reject' is not supported in "
                       "scheduled runs yet (run it with twinflow run, or let a failing Python "
                       "function fail the run)")
    return plan


def _planned(spec: RunSpec, spark: SparkSession, steps: Steps, script: Script
             ) -> tuple[Node, RunRecord | None]:
    """The run's plan, and the record of the run it concerns: a scheduled interval that ran
    before (a re-run), or the run a parity or audit checks. A scheduled run's plan has the
    split its state was built with (the config may have changed since: same result)."""
    if spec.bounded:
        return _bounded_plan(spec, spark, script), None
    if steps is Steps.STREAM:
        recorded = binding.check_interval(spec)
    else:
        recorded = checking.recorded(spec, whole=steps is Steps.AUDIT)
        binding.same_build(spec)
    return plan_for(spec, script, spark, recorded and recorded.topn_split), recorded


def _bounded_plan(spec: RunSpec, spark: SparkSession, script: Script) -> Node:
    """A bounded run's plan, once it is known that its mode can run it and every table it
    reads has input."""
    plan = plan_query(script, spark, spec.topn_split)
    if spec.mode != "batch":
        insert_only(spec, plan)
    batch_ordered, proctime_windows = batch_only(plan), processing_time_windows(plan)
    if batch_ordered and spec.mode == "stream":
        raise InputError(f"--mode stream: the query has an OVER ordered by "
                         f"{batch_ordered[0].order_by}, which is no time attribute: it exists "
                         "in batch mode only (Flink's streaming mode refuses it too); run it "
                         "with --mode batch")
    if proctime_windows and spec.mode == "batch":
        raise InputError(f"--mode batch: the query has a processing-time window ("
                         f"{proctime_windows[0].window.kind} over a PROCTIME() column), which "
                         "exists only in stream mode (Flink's batch mode refuses it too); "
                         "run it with --mode stream")
    given = {k.lower() for k in spec.inputs}
    tables = {k: t for k, t in source_tables(plan).items() if not t.constant}
    missing = sorted(k for k, t in tables.items() if k not in given and not t.options)
    if missing:
        raise InputError(f"no --data given for table(s) the query reads: {', '.join(missing)} "
                         "(nor a WITH clause binding it to its files)")
    sources(tables, spec.inputs, store_of(spark))  # one twinflow cannot read: refused now
    return plan


def insert_only(spec: RunSpec, plan: Node) -> None:
    """A filesystem table takes an insert-only stream, as in Flink: an updating result into
    one is refused when the run streams (``--mode batch`` writes its final result)."""
    if spec.sink is not None and not append_only(plan):
        raise SqlError(f"INSERT INTO {spec.sink.table}: a filesystem table takes only "
                       "inserted rows, and this query's result is updated as its input grows "
                       "(Flink's streaming mode refuses it alike: the sink \"doesn't support "
                       "consuming update changes\"); write it with twinflow run --mode batch, "
                       "or SELECT it into twinflow's own outputs")


def _stage_sink(run: staging.Run, spark: SparkSession, outcome: Outcome,
                streamed: streaming.Streamed | None, batch: DataFrame | None) -> None:
    """A bounded run's INSERT INTO a filesystem table: its rows staged under the table's
    path (io/sink_files.py; committed with the outputs), once the stream has reached the end
    of its input and parity held: the stream's rows, or in ``--mode batch`` the batch's."""
    spec, report = run.spec, run.report
    sink = spec.sink
    if outcome.exit_code != 0:
        report.warnings.append(f"INSERT INTO {sink.table}: nothing written, the run failed")
        return
    if report.stream is not None and not report.stream.complete:
        report.warnings.append(f"INSERT INTO {sink.table}: nothing written yet, the stream "
                               "stopped before the end of its input")
        return
    rows, order = (streamed.final, list(PLACE)) if batch is None or spec.mode == "both" \
        else (batch, [c for c in (EMIT_TS, ROWNUM) if c in batch.columns])
    folder = stage(rows, sink, store_of(spark), uuid.uuid4().hex[:12],
                   [(f.name, f.type) for f in run.plan.fields], order, run.pending, record="run")
    report.outputs[f"INSERT INTO {sink.table}"] = str(folder)


def _batch(run: staging.Run, spark: SparkSession) -> DataFrame:
    """A bounded run's batch mode over the staged input, written to batch.csv; returns the
    result (on disk when parity reads it again: the heap is the driver's in local mode)."""
    tb = time.perf_counter()
    plan = run.plan
    final = batch_dataframe(spark, plan, run.pool)
    if run.spec.mode == "both" or run.spec.sink is not None:  # read again
        final = final.persist(StorageLevel.DISK_ONLY)
    rows = write_csv_frame(final, run.pending / "batch.csv", {f.name: f.type for f in plan.fields},
                           [f.name for f in plan.fields],
                           order=[c for c in (EMIT_TS, ROWNUM) if c in final.columns])["rows"]
    run.report.timings_s["batch"] = round(time.perf_counter() - tb, 3)
    run.report.batch = BatchCount(rows=rows)
    run.written.append("batch.csv")
    return final
