"""``twinflow run``: one query over bounded inputs, in batch, stream or both, with a parity report.

Order of work, so that bad input fails before anything is written (exit 2, nothing half-written):
parse + plan the SQL, check every input file and header, parse the rows on the executors
(ingest.py, into ``_state/parsed``) and check them; then stage micro-batch files, run the
modes, compare. All row work is Spark's, on the executors, as in a scheduled run
(incremental.py): the changelog is read where the stream wrote it, an updating
result is materialized as signed row counts (result_store.py), parity is a Spark job, and each
output file is formatted by the executors into ``_state/pending/``; the files move into place
once the run has ended (a run that fails leaves the previous outputs as they were).

Layout of ``--out DIR``: the result files (batch.csv, changelog.csv, stream.csv, late.csv,
rejected.csv, report.json) and ``_state/``, a query state directory as scheduled runs keep it
(lifecycle.py: manifest, staged input and offer logs, checkpoint, per-batch changelog), plus the
outputs while they are written (``pending/``); the manifest's ``run`` holds the stream run's
fingerprint and how it ended. A stream run stopped early (``--stop-after-batches``) resumes
from ``_state`` when run again with the same SQL, data and batch size; any other run starts
from a clean ``_state``. A stream run that failed, or never ended, is not resumed (its state
may be what failed): the next run recomputes from scratch and says so
(``report["stream"]["recomputed_from_scratch"]`` and a warning).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from operators_lib.batch import batch_dataframe
from operators_lib.catalog import TableDef
from operators_lib.changelog import ADDS
from operators_lib.engine.locations import check_shared, local_path
from operators_lib.engine.spark import engine_failures
from operators_lib.errors import InputError
from operators_lib.io import ingest, offers
from operators_lib.io.output import copy_changelog, write_csv_frame, write_header, write_json
from operators_lib.ops import metrics
from operators_lib.parity.compare import not_comparable
from operators_lib.parity.verdict import FAILED, Explanations, verdict
from operators_lib.plan import (
    EMIT_TS,
    LATE,
    LATE_WINDOW,
    OP,
    ROWNUM,
    SESSION_SPLIT,
    TTL,
    TTL_KEY,
    TTL_UPSTREAM,
    Join,
    Node,
    Over,
    Rank,
    SessionRows,
    WindowAggregate,
    batch_only,
    ends_in_last_part,
    find,
    first_row_dedup,
    late_tag,
    processing_time_windows,
    quote,
    source_tables,
    state_ttl,
)
from operators_lib.relational import WEND
from operators_lib.runs import steps
from operators_lib.scan import staged_schema
from operators_lib.sql import Script, load_script
from operators_lib.state import lifecycle, result_store
from operators_lib.state.queries import plan_query, record_query
from operators_lib.state.result_store import RESULT_ORDER
from operators_lib.state.snapshots import KEPT
from operators_lib.stream.layout import STATE_LAYOUT
from operators_lib.stream.runner import (
    SPARK,
    SparkRuntime,
    changelog_files,
    checkpoint_shuffle_partitions,
    last_commit,
)
from operators_lib.types import FlinkType
from operators_lib.udf.rejects import REASON, rejected_rows

MAX_DEFAULT_BATCH = 100_000
LATE_ROW = "input_row"  # late.csv: the row's 0-based position in its table's (valid) input
# Called after each step ("ingest", "stream", "batch", "parity") with the report so far, and
# while the stream runs with ("stream_progress", {"micro_batch": id, "input_read": 0..1}).
Listener = Callable[[str, dict], None]


@dataclass
class RunConfig:
    sql: list[Path]
    data: dict[str, Path]
    mode: str = "both"  # batch | stream | both
    out: Path = Path("out")
    rows_per_batch: int | None = None
    stop_after_batches: int | None = None
    topn_split: int = 1  # hotspot split factor for every TopN (topn_split.py); 1: none


@dataclass
class Result:
    exit_code: int
    report: dict = field(default_factory=dict)
    message: str = ""


def default_rows_per_batch(largest_table: int) -> int:
    """About four micro-batches per input (several on small inputs), at most 100,000 rows."""
    return max(1, min(MAX_DEFAULT_BATCH, math.ceil(largest_table / 4)))


def check_config(cfg: RunConfig) -> Script:
    """What can be checked without Spark (the CLI calls it before starting the JVM, so that a
    mistake is reported in a second): the SQL parses, every --data names a declared table,
    the options are in range."""
    script = load_script(cfg.sql)
    local_path(cfg.out, "--out")
    for name, path in cfg.data.items():
        local_path(path, f"--data {name}")
    declared = set(script.catalog.tables)
    unknown = sorted({k.lower() for k in cfg.data} - declared)
    if unknown:
        raise InputError(f"--data for undeclared table(s): {', '.join(unknown)} "
                         f"(declared: {', '.join(sorted(declared))})")
    for option, value in (("--rows-per-batch", cfg.rows_per_batch),
                          ("--stop-after-batches", cfg.stop_after_batches)):
        if value is not None and value < 1:
            raise InputError(f"{option} must be at least 1, got {value}")
    return script


def run(cfg: RunConfig, spark: SparkSession, listen: Listener | None = None,
        runtime: SparkRuntime = SPARK) -> Result:
    """``runtime``: how stream mode runs (stream/runner.py; tests pass the operator harness)."""
    with engine_failures(cfg.out):
        return _run(cfg, spark, listen, runtime)


def _run(cfg: RunConfig, spark: SparkSession, listen: Listener | None,
         runtime: SparkRuntime) -> Result:
    """The lifecycle's steps for bounded input (lifecycle.py): stage, stream to the end of
    input, materialize, batch, parity, publish."""
    t0 = time.perf_counter()
    plan = _checked_plan(cfg, spark)
    with lifecycle.locked(cfg.out / "_state"):
        return _run_steps(cfg, spark, plan, listen, runtime, t0)


def _run_steps(cfg: RunConfig, spark: SparkSession, plan: Node, listen: Listener | None,
               runtime: SparkRuntime, t0: float) -> Result:
    notify = listen or (lambda step, info: None)
    run = _stage(cfg, spark, plan)
    run.report["timings_s"] = {"ingest": round(time.perf_counter() - t0, 3)}
    notify("ingest", run.report)
    # Output files are written by the executors into ``pending`` and moved into place at the
    # end: a run that fails (a damaged changelog, a bug) leaves the previous outputs as they were.
    shutil.rmtree(run.pending, ignore_errors=True)
    streamed = batch_final = None
    if cfg.mode == "stream" or (cfg.mode == "both" and not batch_only(plan)):
        streamed = _stream_step(run, spark, runtime, listen)
        notify("stream", run.report)
    if cfg.mode == "batch" or (cfg.mode == "both" and not processing_time_windows(plan)):
        batch_final = _batch_step(run, spark)
        notify("batch", run.report)
    exit_code, message = 0, ""
    exempt = not_comparable(plan)
    if cfg.mode != "both":
        run.report["parity"] = {"verdict": "not_run", "reason": f"mode {cfg.mode}"}
    elif exempt:
        run.report["parity"] = {"verdict": "not_applicable", "reason": exempt}
    elif not run.report["stream"]["complete"]:
        run.report["parity"] = {"verdict": "not_run", "reason": "the stream run is not complete"}
    else:
        run.report["parity"], exit_code, message = _parity(
            spark, plan, run.pool, batch_final, streamed, run.report["stream"])
    notify("parity", run.report)
    if streamed is not None:
        metrics.record_outcome(run.state, run.run_key, parity=run.report["parity"]["verdict"])
    if batch_final is not None:
        batch_final.unpersist()
    _publish(run, t0)
    return Result(exit_code, run.report, message)


def _checked_plan(cfg: RunConfig, spark: SparkSession) -> Node:
    """The query's plan, once it is known that the mode can run it and every table it reads
    has input."""
    plan = plan_query(check_config(cfg), spark, cfg.topn_split)
    batch_ordered, proctime_windows = batch_only(plan), processing_time_windows(plan)
    if batch_ordered and cfg.mode == "stream":
        raise InputError(f"--mode stream: the query has an OVER ordered by "
                         f"{batch_ordered[0].order_by}, which is no time attribute: it exists "
                         "in batch mode only (Flink's streaming mode refuses it too); run it "
                         "with --mode batch")
    if proctime_windows and cfg.mode == "batch":
        raise InputError(f"--mode batch: the query has a processing-time window ("
                         f"{proctime_windows[0].window.kind} over a PROCTIME() column), which "
                         "exists only in stream mode (Flink's batch mode refuses it too); "
                         "run it with --mode stream")
    given = {k.lower() for k in cfg.data}
    missing = sorted(k for k, t in source_tables(plan).items()
                     if k not in given and not t.constant)
    if missing:
        raise InputError(f"no --data given for table(s) the query reads: {', '.join(missing)}")
    return plan


@dataclass
class _Run:
    """What the steps of one ``twinflow run`` share."""

    cfg: RunConfig
    plan: Node
    state: Path
    parsed: ingest.Parsed
    pool: dict[str, list[Path]]  # each table's staged files
    rows_per_batch: int
    fingerprint: str
    discarded: str | None  # why an unfinished stream state was discarded
    report: dict
    run_key: str  # its record in _state/runs and its row in the metrics history
    written: list[str] = field(default_factory=list)

    @property
    def tables(self) -> dict[str, TableDef]:
        return source_tables(self.plan)

    @property
    def pending(self) -> Path:
        return self.state / "pending"


def _stage(cfg: RunConfig, spark: SparkSession, plan: Node) -> _Run:
    """Parse the input (a bad header or a NaN the query cannot take fails the run here), then
    resume the state or stage the input afresh as one run of micro-batches."""
    tables = source_tables(plan)
    given = {k.lower(): v for k, v in cfg.data.items()}
    state = cfg.out / "_state"
    check_shared(spark, cfg.out)
    parsed = steps.parse(spark, plan, {k: (t, ingest.input_files(Path(given[k])))
                                       for k, t in tables.items() if not t.constant}, state)
    fingerprint = _fingerprint(cfg, parsed)
    resume, discarded = resume_decision(state, fingerprint, cfg.mode)
    n = cfg.rows_per_batch or default_rows_per_batch(max(
        (parsed.rows(k) for k in parsed.files), default=0))
    state.mkdir(parents=True, exist_ok=True)
    if not resume:  # what another run left, but its input, snapshots and history
        for entry in state.iterdir():
            if entry.name == steps.PARSED or entry.name in KEPT:
                continue
            if entry.is_dir():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        lifecycle.stage(spark, parsed, state, n, file_batches=False,
                        ends=ends_in_last_part(plan))
    record_query(state, cfg.sql, cfg.topn_split, n)
    pool = {k: ingest.stage_constant(state / "staged" / k) if t.constant else
            lifecycle.staged_files(state, k) for k, t in tables.items()}
    report: dict = {
        "sql": [str(p) for p in cfg.sql], "mode": cfg.mode, "rows_per_batch": n,
        "topn_split": cfg.topn_split,
        "tables": {t.name: {"input_rows": parsed.rows(k) + parsed.rejected(k),
                            "accepted_rows": parsed.rows(k),
                            "rejected_rows": parsed.rejected(k),
                            "micro_batch_files": len(pool[k])}
                   for k, t in tables.items() if not t.constant},
        "columns": [{"name": f.name, "type": f.type.sql()} for f in plan.fields],
        "warnings": plan_warnings(plan) + ([
            f"{discarded}: its state in {state} was discarded and "
            + ("the stream recomputed from scratch" if cfg.mode != "batch" else "not resumed")]
            if discarded else []),
        # The settings in force (the user's where given: operators_lib/engine/spark.py).
        "spark": {"master": spark.sparkContext.master, "app": spark.sparkContext.appName,
                  "shuffle_partitions": int(spark.conf.get("spark.sql.shuffle.partitions"))},
    }
    return _Run(cfg, plan, state, parsed, pool, n, fingerprint, discarded, report,
                datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%f"))


@dataclass
class _Streamed:
    """What parity needs of the stream step: its result, and what may explain a difference
    from batch (late rows per table, (row, window end) pairs, expired keys)."""

    final: DataFrame
    late: dict[str, DataFrame]
    late_windows: DataFrame | None
    expired: DataFrame | None  # the TTL_KEY hashes of keys whose state expired
    expired_upstream: bool


def _stream_step(run: _Run, spark: SparkSession, runtime: SparkRuntime,
                 listen: Listener | None) -> _Streamed:
    """Offer the staged input (all of it, or the first ``--stop-after-batches`` files), stream
    it from the checkpoint, write changelog.csv, stream.csv and late.csv from the changelog and
    record the run."""
    cfg, plan, state, report = run.cfg, run.plan, run.state, run.report
    types = {f.name: f.type for f in plan.fields}
    columns = [f.name for f in plan.fields]
    # Until the stream has ended and its changelog checked, the state is not resumable.
    _set_run_status(state, run.fingerprint, "running")
    for name, table in run.tables.items():
        files = run.pool[name][:cfg.stop_after_batches]  # None: all of them
        ends = cfg.stop_after_batches is None or cfg.stop_after_batches >= len(run.pool[name]) + 1
        lifecycle.offer(state, name, files, table if ends else None)
    srun = lifecycle.stream(spark, plan, state, list(run.tables), run.rows_per_batch, runtime,
                            _input_read(state, list(run.tables), listen) if listen else None)
    report["timings_s"]["stream"] = round(srun.seconds, 3)
    last_batch = last_commit(state / "checkpoint")
    kept = checkpoint_shuffle_partitions(state / "checkpoint")
    if kept is not None and kept != report["spark"]["shuffle_partitions"]:
        # A resumed stream keeps the partitioning its state was written with.
        report["spark"]["stream_shuffle_partitions"] = kept
        report["warnings"].append(
            f"the resumed stream keeps the {kept} shuffle partitions its checkpoint was "
            f"written with (spark.sql.shuffle.partitions is "
            f"{report['spark']['shuffle_partitions']} in this session)")
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
    _set_run_status(state, run.fingerprint, "complete" if done else "stopped")
    late = _late_rows(log, plan, run.tables) if kinds[LATE] else {}
    late_count = _write_late_csv(spark, pending / "late.csv", run.tables, run.pool, late)
    late_windows = log.where(F.col(OP) == LATE_WINDOW).select(
        ROWNUM, F.col(EMIT_TS).alias(WEND)).distinct() if kinds[LATE_WINDOW] else None
    expired = log.where(F.col(OP) == TTL).select(TTL_KEY).distinct() if kinds[TTL] else None
    report["stream"] = {
        "complete": done, "micro_batches_this_run": srun.micro_batches,
        "changelog_rows": kinds["rows"], "rows": stream_rows, "late_rows": late_count,
        "late_row_windows": 0 if late_windows is None else late_windows.count(),
        "session_splits": kinds[SESSION_SPLIT],
        "ttl_expired_keys": (0 if expired is None else expired.count()) if state_ttl(plan)
        else None,
        "last_progress": _progress_summary(srun.progress),
    }
    run.written += ["changelog.csv", "stream.csv", "late.csv"]
    if run.discarded:
        report["stream"]["recomputed_from_scratch"] = run.discarded
    previous = lifecycle.previous_record(state, run.run_key)  # a resumed run's first part
    steps.record(state, run.run_key, "twinflow run", plan, srun,
                 previous["last_batch"] + 1 if previous else 0, last_batch,
                 {"interval": run.run_key,
                  "watermark": report["stream"]["last_progress"].get("watermark"),
                  **{k: v for k, v in report["stream"].items() if k != "last_progress"}},
                 {k: run.parsed.rows(k) for k in run.parsed.files},
                 sum(run.parsed.rejected(k) for k in run.parsed.files), late_count,
                 cfg.topn_split)
    if not done:
        report["stream"]["note"] = (f"stopped after {cfg.stop_after_batches} micro-batch(es); "
                                    "run again with the same arguments to resume")
    return _Streamed(final, late, late_windows, expired, bool(kinds[TTL_UPSTREAM]))


def _batch_step(run: _Run, spark: SparkSession) -> DataFrame:
    """Batch over the staged input, written to batch.csv; returns the result (on disk when
    parity reads it again: the heap is the driver's in local mode)."""
    tb = time.perf_counter()
    plan = run.plan
    final = batch_dataframe(spark, plan, run.pool)
    if run.cfg.mode == "both":
        final = final.persist(StorageLevel.DISK_ONLY)
    rows = write_csv_frame(final, run.pending / "batch.csv", {f.name: f.type for f in plan.fields},
                           [f.name for f in plan.fields],
                           order=[c for c in (EMIT_TS, ROWNUM) if c in final.columns])["rows"]
    run.report["timings_s"]["batch"] = round(time.perf_counter() - tb, 3)
    run.report["batch"] = {"rows": rows}
    run.written.append("batch.csv")
    return final


def _publish(run: _Run, t0: float) -> None:
    """Move the outputs into place and write report.json."""
    out, report = run.cfg.out, run.report
    report["late_rows"] = report.get("stream", {}).get("late_rows", 0)
    udf = _udf_rejects(run)
    report["rejected_rows"] = ingest.write_rejected(run.parsed, run.pending / "rejected.csv",
                                                    udf)
    if udf is not None:
        report["udf_rejected_rows"] = report["rejected_rows"] - sum(
            run.parsed.rejected(k) for k in run.parsed.files)
    shutil.rmtree(run.parsed.dir, ignore_errors=True)  # staged: the parsed copy is not needed
    report["timings_s"]["total"] = round(time.perf_counter() - t0, 3)
    report["outputs"] = {name: str(out / name)
                         for name in [*run.written, "rejected.csv", "report.json"]}
    for name in [*run.written, "rejected.csv"]:
        os.replace(run.pending / name, out / name)
    shutil.rmtree(run.pending / ".result", ignore_errors=True)  # an updating stream's result
    write_json(out / "report.json", report)


def _udf_rejects(run: _Run) -> Path | None:
    """The input rows a Python function failed on, in reject mode (udf/rejects.py), as
    rejected.csv's lines (its header first) in a file of their own; None without reject mode.
    ``file``: the input file the row came from; ``row``: its values as JSON."""
    spark = SparkSession.getActiveSession()
    rows = rejected_rows(run.plan, lambda node: batch_dataframe(spark, node, run.pool))
    if rows is None:
        return None
    staged = lifecycle.manifest(run.state)["tables"]
    tables = {t.name: (k, t) for k, t in run.tables.items()}
    picked = None
    for name, (key, table) in tables.items():
        files = staged.get(key, {}).get("files", {})
        which = F.lit(None).cast("string")
        for file, entry in files.items():
            which = F.when((F.col(ROWNUM) >= entry["first_row"]) & (
                F.col(ROWNUM) < entry["first_row"] + entry["rows"]), F.lit(file)).otherwise(which)
        values = spark.read.schema(staged_schema(table)).parquet(*map(str, run.pool[key]))
        part = rows.where(F.col("table") == name).join(values, ROWNUM).select(
            F.col("table"), which.alias("file"), F.lit(None).cast("string").alias("line"),
            F.concat(F.lit("input row "), F.col(ROWNUM).cast("string"), F.lit(" (0-based, of "
                     "the table's valid rows): "), F.col(REASON)).alias("reason"),
            F.to_json(F.struct(*[F.col(quote(c.name)) for c in table.physical])).alias("row"),
            F.col(ROWNUM))
        picked = part if picked is None else picked.unionByName(part)
    path = run.pending / ".udf_rejected.csv"
    string = FlinkType.parse("STRING")
    write_csv_frame(picked, path, dict.fromkeys(ingest.REJECTED_COLUMNS, string),
                    ingest.REJECTED_COLUMNS, order=["table", ROWNUM])
    return path


def plan_warnings(plan: Node) -> list[str]:
    """What a user should know about how the query will run."""
    return [f"a {j.kind} join without an equality key runs on a single partition (every row "
            "of both inputs meets in one task), as in Flink" for j in find(plan, Join)
            if not j.left_keys]


def _parity(spark: SparkSession, plan: Node, pool: dict[str, list[Path]], batch: DataFrame,
            streamed: _Streamed, counts: dict) -> tuple[dict, int, str]:
    """The parity verdict, exit code and message; ``counts``: the stream step's report."""
    late, late_windows = streamed.late, streamed.late_windows
    on_time = (lambda: batch_dataframe(spark, plan, pool, late, late_windows)) if (
        late or late_windows is not None) else None
    result, diff = verdict(plan, batch, streamed.final, {f.name: f.type for f in plan.fields},
                           [f.name for f in plan.fields], Explanations(
                               streamed.expired, streamed.expired_upstream, on_time,
                               counts["late_rows"], counts["late_row_windows"],
                               counts["session_splits"]))
    if result["verdict"] != FAILED:
        return result, 0, ""
    lines = ["parity failed: stream and batch results differ"]
    for label, rows in (("only in batch", diff.only_batch), ("only in stream", diff.only_stream)):
        for r in rows[:10]:
            lines.append(f"  {label}: {r}")
    return result, 1, "\n".join(lines)


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
    return write_csv_frame(picked, path, _physical_types(tables), picked.columns,
                           order=["table", LATE_ROW])["rows"]


def _physical_types(tables) -> dict:
    return {c.name: c.type for t in tables.values() for c in t.physical}


def _input_read(state: Path, tables: list[str], listen: Listener) -> Callable[[dict], None]:
    """A stream progress callback reporting the share of the offered input files read (the file
    source reads one per micro-batch: its offset is the count read, minus one)."""
    offered = sum(len(offers.offered(state / "staged" / t)) for t in tables)

    def on_progress(progress: dict) -> None:
        read = {s["description"]: json.loads(s["endOffset"])["logOffset"] + 1
                for s in progress["sources"] if s.get("endOffset")}  # a self-join: one source
        listen("stream_progress", {"micro_batch": progress["batchId"],
                                   "input_read": min(1.0, sum(read.values()) / max(offered, 1))})
    return on_progress


def _progress_summary(progress: list[dict]) -> dict:
    if not progress:
        return {}
    last = progress[-1]
    ops = last.get("stateOperators") or []
    return {
        "batch_id": last.get("batchId"),
        "watermark": (last.get("eventTime") or {}).get("watermark"),
        # Spark's count of the rows its sources read: the end-of-input markers included.
        "input_rows_total": sum(p.get("numInputRows", 0) for p in progress),
        "state_rows": sum(o.get("numRowsTotal", 0) for o in ops),
        "state_memory_bytes": sum(o.get("memoryUsedBytes", 0) for o in ops),
    }


def _fingerprint(cfg: RunConfig, parsed: ingest.Parsed) -> str:
    """What a stopped stream run may resume with: the same SQL, input (its digest, from the
    tasks that read it), batch size and split."""
    h = hashlib.sha256()
    for p in cfg.sql:
        h.update(Path(p).read_bytes())
    h.update(parsed.digest().encode())
    # The batch size as given (by default it follows from the data); the split changes the
    # state layout.
    h.update(f"{cfg.rows_per_batch}:{cfg.topn_split}".encode())
    h.update(STATE_LAYOUT.encode())  # a stopped run of another layout starts afresh
    return h.hexdigest()


def _set_run_status(state: Path, fingerprint: str, status: str) -> None:
    """The stream run's fingerprint and status in the state's manifest (what
    ``resume_decision`` reads; the run's record is lifecycle.record_run's)."""
    manifest = lifecycle.manifest(state)
    manifest["run"] = {"fingerprint": fingerprint, "status": status}
    lifecycle.save_manifest(state, manifest)


def resume_decision(state: Path, fingerprint: str, mode: str) -> tuple[bool, str | None]:
    """(resume the stream state?, why an unfinished stream's state is discarded, if it is).

    Only a stream stopped by ``--stop-after-batches`` resumes, and only with the same fingerprint
    (SQL, data, batch size, split). A run that failed or was killed left its record at
    "running": its checkpoint may be what failed, so it is recomputed, never silently."""
    record = lifecycle.manifest(state).get("run", {})
    status = record.get("status")
    if status == "stopped" and record.get("fingerprint") == fingerprint and mode != "batch":
        return True, None
    if status == "stopped":
        return False, ("batch mode does not resume the stopped stream run" if mode == "batch"
                       else "the stopped stream run was for other SQL, data or arguments")
    if status == "running":
        return False, "the previous stream run did not finish (it failed or was interrupted)"
    if not record and (state / "checkpoint").exists():
        return False, "the stream state has no record of how its run ended"
    return False, None
