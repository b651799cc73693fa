"""Incremental (scheduled) runs of one query: the state lifecycle behind the Airflow DAGs.

A query's state directory (``$TWINFLOW_HOME/state/<query>``) has the layout every run shares
(lifecycle.py: manifest, parsed, staged, checkpoint, changelog, result, and a record
per run, ``runs/<key>.json``, here keyed by the run's data interval: a re-run of the interval
rebuilds the same outputs from it); scheduled runs add::

    <state>/late/           what each run's micro-batches left out, for parity: late rows,
                            (row, window) pairs, the keys whose state expired (state TTL)
    <state>/retired/        the previous checkpoint, changelog, result, late rows and offer
                            logs after a rebuild

A run reads only its own micro-batches' changelog, on the executors (Spark jobs: the driver
holds counts, not rows). Its output (``stream.csv``): for an
append-only query (OVER, windows, interval and temporal joins, keep-first deduplication) the
rows emitted in the run, so that the intervals' outputs together are the result; for an
updating query (joins, GROUP BY, TopN) the whole result after the run, merged from the result
before it and the run's changes, which it also writes (``changes.csv``: op and row).

The checkpoint is bound to the query's SQL, the TopN split factor and the state layout it was
written with (``manifest.json`` records them): the SQL and the split decide the operators and
their keys, the layout how operators store their state (stream/layout.py). When the query's
SQL changed (a new version; its tables' columns must stay as its input was staged), its config
asks for another factor (the hotspot DAG changed it), or this twinflow stores state in another
layout than the one that wrote the checkpoint (an upgrade), ``stream_increment`` retires the
checkpoint and its changelog (one generation is kept under ``retired/``, with the SQL it ran,
for a manual rollback) and rebuilds the state by replaying every staged input file into a new
checkpoint before the new files: the materialized result is then exactly that of an
uninterrupted run of the new query, factor or layout, and ``batch_parity`` checks it as after
any run (an append-only result leaves out what the retired
state had emitted: it was published before). Cost: one replay of the retained input.

Each ``stream_increment`` stages only input files that arrived since the last run, and runs the
streaming query with ``availableNow`` from the checkpoint: results whose event time the
watermark has passed are emitted; the rest stay in state for the next run (no end-of-input
flush: the stream goes on). Staging is one transaction: every new file is read and checked
first (its header; more malformed rows than the config's ``max_rejected_rows``, default 0, and
nothing is staged: the rows are in the run's rejected.csv), parsed by the executors into
``parsed/`` (ingest.py); then the micro-batch files are written and the manifest, saved
last, commits them (lifecycle.stage); every staged file is then offered to the stream. Files
that a failed run left beyond the manifest were never offered to the stream (it runs after the
manifest is saved): they are removed, so a later run succeeds once the input is fixed.
``batch_parity`` recomputes
the same input in batch and proves that every row the run emitted equals the batch result for
that row (append-only results), or that the result equals the batch result (updating ones); the
counts show every input row emitted, late (dropped, with its reason) or still pending behind the
watermark; rows of keys whose state expired (``table.exec.state.ttl``) may differ, and
only they (as in ``twinflow run``). The batch reads the staged input the run's results can
reach (parity_scope.py):
from a cut for OVER RANGE INTERVAL and TUMBLE/HOP/CUMULATE windows; the rows of the keys the
run touched where the one stateful operator is keyed by columns the result shows (an updating
result is then compared for those keys); all of it otherwise (a cost that grows with the
retained input).

Runs are keyed by their data interval (the run directory's name, the DAG's ``ts_nodash``). An
interval's first run records what it covered; clearing the run in Airflow (or a retry after its
stream step succeeded) re-runs it for the same interval: nothing is staged or streamed, the
outputs are rebuilt from the changelog up to the interval's last micro-batch and checked
against batch over the input staged by then, so the gate and publish see the same result as
the first time. An interval before the newest recorded one that never ran is refused (exit 2):
the stream's state cannot go back to it.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pandas as pd
from pyspark.sql import DataFrame, Observation, SparkSession
from pyspark.sql import functions as F

from operators_lib.batch import batch_dataframe
from operators_lib.changelog import ADDS, KINDS
from operators_lib.errors import InputError, ParityError, SqlError
from operators_lib.io import ingest, offers
from operators_lib.io.output import copy_changelog, write_csv_frame, write_json
from operators_lib.ops import metrics
from operators_lib.parity.compare import (
    SAMPLE,
    compare_frames,
    not_comparable,
    session_splits_differ,
)
from operators_lib.parity.scope import (
    cut_ms,
    key_scope,
    parts_from,
    reach_ms,
    time_operator,
)
from operators_lib.parity.verdict import Explanations, verdict
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
    WindowAggregate,
    append_only,
    batch_only,
    scans,
    source_tables,
    state_ttl,
)
from operators_lib.relational import WEND
from operators_lib.runs import steps
from operators_lib.runs.pipeline import late_source
from operators_lib.runs.query_config import QueryConfig
from operators_lib.scan import staged_schema
from operators_lib.sql import load_script
from operators_lib.sql.script import UDF_ERRORS
from operators_lib.state import lifecycle, result_store
from operators_lib.state.queries import plan_query, record_query, recorded_script, sql_changed
from operators_lib.state.result_store import RESULT_ORDER, result_rows
from operators_lib.stream.layout import STATE_LAYOUT, UNRECORDED
from operators_lib.stream.runner import (
    changelog_files,
    changelog_frame,
    checkpoint_shuffle_partitions,
    last_commit,
)
from operators_lib.udf.rejects import guards

# What ``late/upto-<batch>/`` keeps of a run's changelog: (column, changelog column, type).
_LEFT_OUT = ((OP, OP, "string"), (ROWNUM, ROWNUM, "long"), (WEND, EMIT_TS, "long"),
             (TTL_KEY, TTL_KEY, "long"))


def plan_for(cfg: QueryConfig, spark: SparkSession, split: int | None = None) -> Node:
    """The query's plan with its TopNs split by ``split`` (default: the config's factor)."""
    plan = plan_query(load_script(cfg.sql), spark, cfg.topn_split if split is None else split)
    for over in batch_only(plan)[:1]:
        raise SqlError(f"query {cfg.name}: an OVER ordered by {over.order_by}, "
                       "which is no time attribute, exists in batch mode only; a scheduled "
                       "query runs as a stream")
    if guards(plan):
        raise SqlError(f"query {cfg.name}: '{UDF_ERRORS}' = 'reject' is not supported in "
                       "scheduled runs yet (run it with twinflow run, or let a failing Python "
                       "function fail the run)")
    return plan


def parse_new_inputs(cfg: QueryConfig, spark: SparkSession, plan: Node, state: Path
                     ) -> ingest.Parsed:
    """Parse every input file the manifest does not list yet (ingest.parse, into the state's
    ``parsed/``), staging nothing: a file whose header does not match fails the run here."""
    manifest = lifecycle.manifest(state)
    new = {}
    for key, table in source_tables(plan).items():
        if table.constant:
            raise SqlError(f"query {cfg.name}: a SELECT without FROM (a constant row) is not "
                           "supported in scheduled runs yet; run it with twinflow run")
        seen = manifest["tables"].get(key, {}).get("files", {})
        src = cfg.inputs.get(table.name) or cfg.inputs.get(key)
        if src is None:
            raise InputError(f"query {cfg.name}: no input directory for table {table.name}")
        new[key] = (table, [f for f in ingest.input_files(src) if f.name not in seen]
                    if Path(src).is_dir() and any(Path(src).glob("*.csv")) else [])
    return steps.parse(spark, plan, new, state)


def check_rejected(cfg: QueryConfig, parsed: ingest.Parsed, rejected_csv: Path) -> None:
    """More malformed rows than ``max_rejected_rows`` in the new input: nothing is staged (the
    input is not consumed, so fixing or removing it lets the next run go on)."""
    rejected = parsed.rejected()
    if rejected <= cfg.max_rejected_rows:
        return
    total = rejected + parsed.rows()
    per_file = ", ".join(f"{f.path.name}: {bad}" for k in parsed.files
                         for f, _, bad in parsed.per_file(k) if bad)
    raise InputError(
        f"query {cfg.name}: {rejected} of {total} rows of the new input files were rejected as "
        f"malformed ({per_file}), more than max_rejected_rows = {cfg.max_rejected_rows}; they "
        f"are listed with file, line and reason in {rejected_csv}. Nothing was staged: fix or "
        "remove those rows, or raise max_rejected_rows in the query's config")


def stage_new_inputs(cfg: QueryConfig, spark: SparkSession, parsed: ingest.Parsed, state: Path
                     ) -> dict:
    """Stage the new input (each landed file starts a micro-batch) and offer every staged file
    to the stream (also those a run that failed after staging did not offer); returns
    {table: new rows}."""
    added = lifecycle.stage(spark, parsed, state, cfg.rows_per_batch, file_batches=True)
    for key in lifecycle.manifest(state)["tables"]:
        lifecycle.offer(state, key, lifecycle.staged_files(state, key))
    return {parsed.tables[key].name: parsed.rows(key) for key in added}


def same_build(cfg: QueryConfig, state: Path) -> None:
    """InputError unless the state was built by this twinflow's layout (stream/layout.py) and
    the config's SQL: a re-run, parity or audit of a state that an upgrade or a new version of
    the query has not yet rebuilt would read it with other code or another plan."""
    manifest = lifecycle.manifest(state)
    layout = manifest.get("state_layout", UNRECORDED)
    if layout != STATE_LAYOUT:
        raise InputError(f"the query's state was written in another state layout ({layout}; "
                         f"this twinflow's: {STATE_LAYOUT}): the query's next scheduled run "
                         "rebuilds it, after which intervals before it cannot be re-run")
    if sql_changed(manifest.get("query"), cfg.sql):
        raise InputError(f"query {cfg.name}: its SQL changed since its state was built: the "
                         "query's next scheduled run rebuilds the state, after which "
                         "intervals before it cannot be re-run")


def bind_state(cfg: QueryConfig, state: Path) -> dict | None:
    """Bind the state to the query's SQL, the config's TopN split factor and this twinflow's
    state layout (stream/layout.py): when one changed (a new version of the query; the
    hotspot DAG raised the split; an upgrade changed how state is stored), retire the
    checkpoint, changelog, offer logs, result and left-out rows (see the module docstring);
    ``stage_new_inputs`` then offers every staged file to the new one. Each step can be
    repeated after a crash: the checkpoint moves last, the manifest is saved last. Returns what
    was rebuilt and why (None: nothing)."""
    manifest = lifecycle.manifest(state)
    old, new = int(manifest.get("topn_split", 1)), cfg.topn_split
    layout = manifest.get("state_layout", UNRECORDED)
    query = manifest.get("query")
    new_sql = sql_changed(query, cfg.sql)
    if new_sql:
        _same_tables(cfg, query, manifest)
    if old == new and layout == STATE_LAYOUT and not new_sql:
        if "state_layout" not in manifest:  # recorded from the first run on
            manifest["state_layout"] = STATE_LAYOUT
            lifecycle.save_manifest(state, manifest)
        return None
    retired, retiring = state / "retired", state / ".retiring"
    if (state / "checkpoint").exists():
        retiring.mkdir(parents=True, exist_ok=True)
        (retiring / "topn_split").write_text(f"{old}\n")
        (retiring / "state_layout").write_text(f"{layout}\n")
        write_json(retiring / "query.json", query or {})  # the SQL it ran
        for log in (state / "staged").glob(f"*/{offers.LOG}"):  # what the stream was offered
            (retiring / "offers").mkdir(exist_ok=True)
            os.replace(log, retiring / "offers" / log.parent.name)
        # ("source": the hard-linked offers of layouts before offer logs)
        for name in ("changelog", "late", "result", "source", "checkpoint"):
            if (state / name).exists():
                os.replace(state / name, retiring / name)
    if retiring.exists():  # the previous generation goes only once this one is complete
        shutil.rmtree(retired, ignore_errors=True)
        os.replace(retiring, retired)
    manifest["topn_split"], manifest["state_layout"] = new, STATE_LAYOUT
    # Runs recorded before refer to the retired changelog (stream_increment's run records).
    manifest["generation"] = manifest.get("generation", 0) + 1
    lifecycle.save_manifest(state, manifest)
    replayed = sum(t["rows"] for t in manifest["tables"].values())
    if not replayed:
        return None  # nothing staged yet: the first run starts with the new split and layout
    return {"reason": "the query's SQL changed" if new_sql else
            "the TopN split changed" if old != new else
            "twinflow's state layout changed (an upgrade)",
            "from_split": old, "to_split": new, "from_layout": layout, "to_layout": STATE_LAYOUT,
            "retired": str(retired), "replayed_input_rows": replayed}


def _same_tables(cfg: QueryConfig, recorded: dict, manifest: dict) -> None:
    """InputError if the new SQL declares a table with staged input with other columns: its
    retained input, staged with the old ones, cannot be replayed into the new state."""
    before = recorded_script(recorded).catalog.tables
    after = load_script(cfg.sql).catalog.tables
    for key in manifest["tables"]:
        if key not in before or key not in after:
            continue
        old, new = (staged_schema(t[key]).simpleString() for t in (before, after))
        if old != new:
            raise InputError(
                f"query {cfg.name}: the new SQL declares table {after[key].name} with other "
                f"columns than the input it has retained was staged with ({old} -> {new}): "
                "that input cannot rebuild the new query's state; give the changed query a "
                "new name (a new state)")


def result_identity(plan: Node) -> list[str]:
    """The columns that pair an emitted row with its batch row. A window aggregate's result
    row is its key's window: its first input row and its end - 1 (``EMIT_TS`` in both modes),
    since a HOP or CUMULATE row can be the first of several windows that fire at different
    runs. Every other result row: its input row."""
    while isinstance(plan, (Filter, Project)):
        plan = plan.child
    return [ROWNUM, EMIT_TS] if isinstance(plan, WindowAggregate) else [ROWNUM]


def _check_interval(cfg: QueryConfig, state: Path, run_key: str) -> dict | None:
    """The record of an interval that ran before (its re-run rebuilds that result), or None
    for a new interval, which must come after every recorded one: the stream's state has
    moved past an older interval and cannot process input as of then."""
    record = lifecycle.run_record(state, run_key)
    generation = lifecycle.manifest(state).get("generation", 0)
    if record is not None:
        same_build(cfg, state)
        if record["generation"] != generation:
            raise InputError(
                f"interval {run_key} ran before the query's state was rebuilt (its SQL, TopN "
                "split or twinflow's state layout changed), so its result cannot be rebuilt "
                "from the new state; its published version stands")
        return record
    newest = max(lifecycle.run_keys(state), default=None)
    if newest is not None and run_key < newest:
        raise InputError(
            f"interval {run_key} comes before interval {newest}, which the query's stream has "
            "already processed: a new interval must come after it (a run of an interval that "
            "ran before re-publishes its result; for past data use a batch backfill)")
    return None


def stream_increment(cfg: QueryConfig, spark: SparkSession, state: Path, run_dir: Path) -> dict:
    """Stage new input, run the stream from its checkpoint, write the candidate output.

    The run is keyed by its data interval, the name of ``run_dir``. The first run of an interval
    stages what arrived since the last run and records what it covered (``runs/<key>.json``
    in the state). A re-run of the same interval (an Airflow task cleared or retried after the
    stream step succeeded) stages and streams nothing: it rebuilds the same outputs from the
    changelog up to the interval's last micro-batch. The run holds the state
    (lifecycle.locked)."""
    with lifecycle.locked(state):
        return _stream_increment(cfg, spark, state, run_dir)


def _stream_increment(cfg: QueryConfig, spark: SparkSession, state: Path, run_dir: Path
                      ) -> dict:
    t0 = time.perf_counter()
    run_key = run_dir.name
    record = _check_interval(cfg, state, run_key)
    plan = plan_for(cfg, spark, None if record is None else record["topn_split"])
    if record is not None:
        run_dir.mkdir(parents=True, exist_ok=True)
        _emit(spark, plan, state, run_dir, record["first_batch"], record["last_batch"],
              record["replayed"])
        report = record["report"] | {"rerun": True,
                                     "seconds": round(time.perf_counter() - t0, 3)}
        write_json(run_dir / "stream_report.json", report)
        return report
    parsed = parse_new_inputs(cfg, spark, plan, state)
    # How long the oldest new file of each table waited for this run (the ops view's lag).
    waited = {key: round(time.time() - min(f.path.stat().st_mtime for f in files), 1)
              for key, files in parsed.files.items() if files}
    rejected = parsed.rejected()
    run_dir.mkdir(parents=True, exist_ok=True)
    ingest.write_rejected(parsed, run_dir / "rejected.csv")
    check_rejected(cfg, parsed, run_dir / "rejected.csv")
    lifecycle.discard_unstaged(state)
    rebuilt = bind_state(cfg, state)
    added = {s.table.name: 0 for s in scans(plan)} | stage_new_inputs(cfg, spark, parsed, state)
    shutil.rmtree(parsed.dir, ignore_errors=True)  # staged: the parsed copy is not needed
    record_query(state, cfg.sql, cfg.topn_split, cfg.rows_per_batch)
    # The run covers every micro-batch since the last recorded run, also those of a run that
    # failed after its stream step (they were never published), or, when the state was
    # replaced since (a rebuild), the new state's from its first.
    previous = lifecycle.previous_record(state, run_key)
    generation = lifecycle.manifest(state).get("generation", 0)
    replayed = previous is not None and previous["generation"] != generation
    first_batch = previous["last_batch"] + 1 if previous and not replayed else 0
    srun = lifecycle.stream(spark, plan, state, sorted(source_tables(plan)),
                            cfg.rows_per_batch)
    last_batch = last_commit(state / "checkpoint")
    emitted = _emit(spark, plan, state, run_dir, first_batch, last_batch, replayed)
    before = previous["report"] if previous else {}
    emitted["emitted_rows_total"] = emitted["emitted_rows"] + (
        before.get("emitted_rows_total", 0) if append_only(plan) else 0)
    # A replay emits the split markers of all the input again.
    emitted["session_splits_total"] = emitted["session_splits"] + (
        0 if replayed else before.get("session_splits_total", 0))
    manifest = lifecycle.manifest(state)
    progress = srun.progress[-1] if srun.progress else {}
    report = {
        "query": cfg.name, "interval": run_key, "new_input_rows": added,
        "rejected_rows": rejected, "max_rejected_rows": cfg.max_rejected_rows,
        "topn_split": cfg.topn_split, "state_rebuilt": rebuilt,
        "micro_batches": srun.micro_batches, "stream_seconds": round(srun.seconds, 3),
        **emitted,
        "input_rows_total": sum(t["rows"] for t in manifest["tables"].values()),
        "watermark": (progress.get("eventTime") or {}).get("watermark"),
        "state_rows": sum(o.get("numRowsTotal", 0) for o in progress.get("stateOperators", [])),
        # Spark keeps a checkpoint's shuffle partitions: the count in force, not the session's.
        "shuffle_partitions": checkpoint_shuffle_partitions(state / "checkpoint"),
        "seconds": round(time.perf_counter() - t0, 3),
    }
    write_json(run_dir / "stream_report.json", report)
    new_rows = {k: added.get(t.name, 0) for k, t in source_tables(plan).items()}
    steps.record(state, run_key, "scheduled", plan, srun, first_batch, last_batch, report,
                 new_rows, rejected, emitted["late_rows"], cfg.topn_split, replayed, waited)
    return report


def _emit(spark: SparkSession, plan: Node, state: Path, run_dir: Path, first: int, upto: int,
          replayed: bool) -> dict:
    """The run's outputs from its micro-batches ``first`` .. ``upto`` (see the module docstring):
    stream.csv, changes.csv for an updating result (copied from the changelog's lines:
    output.copy_changelog; an updating result is merged and written by the executors), and the
    rows the stream left out, kept in the state for later parity (``late/upto-<batch>/``).
    ``replayed``: the state was rebuilt from the retained input since the previous run; an
    append-only result then leaves out the rows the retired state had emitted (published
    before)."""
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
                      for c, src, t in _LEFT_OUT]) \
            .write.mode("overwrite").parquet(str(state / "late" / f"upto-{upto:08d}"))
        kinds = counted.get
    result_store.retracts(plan, kinds)
    batches = changelog_files(state / "changelog", state / "checkpoint", first, upto)
    if append_only(plan) and replayed:
        rows = _emitted(spark, plan, state, log.where(~F.col(OP).isin(*MARKERS)), replayed)
        emitted = write_csv_frame(rows, run_dir / "stream.csv", types, columns,
                                  order=list(PLACE))["rows"]
    elif append_only(plan):
        emitted = copy_changelog(batches, None, (run_dir / "stream.csv", columns))["rows"]
    else:
        copy_changelog(batches, (run_dir / "changes.csv", ["op", *columns]))
        rows = result_rows(spark, state, upto, result_store.result_schema(plan, log))
        emitted = write_csv_frame(rows, run_dir / "stream.csv", types, columns,
                                  order=[RESULT_ORDER])["rows"]
    return {"emitted_rows": emitted,
            "changelog_rows": sum(kinds[k] for k in KINDS),
            "late_rows": kinds[LATE], "late_row_windows": kinds[LATE_WINDOW],
            "session_splits": kinds[SESSION_SPLIT]}


def _emitted(spark: SparkSession, plan: Node, state: Path, changes: DataFrame,
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


def _run_result(spark: SparkSession, plan: Node, state: Path, record: dict, whole: bool,
                out: Path) -> DataFrame:
    """What the run of ``record`` published in stream.csv, as a DataFrame; ``whole``: every
    row the state's stream emitted up to that run (an updating query: its result, merged into
    ``out``: the audit, which may run beside a query run, does not write the store)."""
    last = record["last_batch"]
    if not append_only(plan):  # the columns of one micro-batch's changelog suffice
        return result_rows(spark, state, last, result_store.result_schema(
            plan, result_store.changelog(spark, plan, state, last, last)),
            into=out / ".result" if whole else None)
    log = result_store.changelog(spark, plan, state, 0 if whole else record["first_batch"], last)
    return _emitted(spark, plan, state, log.where(~F.col(OP).isin(*MARKERS)),
                    record["replayed"] and not whole)


def _parity_cut(plan: Node, state: Path, record: dict, table: str, parts: list[Path]
                ) -> int | None:
    """The earliest event time the run's parity needs (parity_scope.py); None: all input."""
    previous = lifecycle.previous_record(state, record["report"]["interval"])
    if previous is None or record["replayed"] or reach_ms(plan) is None:
        return None
    time_col = scans(plan)[0].table.watermark.column
    new_parts = parts[previous["parts"].get(table, 0):]
    return cut_ms(plan, previous["report"]["watermark"], new_parts, time_col)


def _left_out(spark: SparkSession, state: Path, upto: int) -> DataFrame | None:
    """What the micro-batches of every run up to ``upto`` left out (``_emit``): rows by kind
    (OP) with ROWNUM, WEND and TTL_KEY; None: nothing."""
    kept = [str(d) for d in (state / "late").glob("upto-*")
            if int(d.name.removeprefix("upto-")) <= upto]
    schema = ", ".join(f"{c} {t}" for c, _, t in _LEFT_OUT)
    return spark.read.schema(schema).parquet(*kept) if kept else None


def _late_so_far(spark: SparkSession, state: Path, upto: int
                 ) -> tuple[DataFrame | None, DataFrame | None]:
    """The late rows and (row, window end) pairs of every run up to micro-batch ``upto``."""
    left_out = _left_out(spark, state, upto)
    if left_out is None:
        return None, None
    return (left_out.where(F.col(OP) == LATE).select(ROWNUM),
            left_out.where(F.col(OP) == LATE_WINDOW).select(ROWNUM, WEND))


def _explanations(spark: SparkSession, plan: Node, state: Path, record: dict) -> Explanations:
    """The keys whose state expired in any run up to the one of ``record`` (state TTL): what
    may explain where an updating result differs from batch."""
    left_out = _left_out(spark, state, record["last_batch"])
    if left_out is None or not state_ttl(plan):
        return Explanations()
    counts = {r[OP]: r["count"] for r in left_out.groupBy(OP).count().collect()}
    return Explanations(
        left_out.where(F.col(OP) == TTL).select(TTL_KEY).distinct() if counts.get(TTL) else None,
        bool(counts.get(TTL_UPSTREAM)))


def batch_parity(cfg: QueryConfig, spark: SparkSession, state: Path, run_dir: Path) -> dict:
    """Batch over the staged input, compared with what the run published, as Spark jobs.

    OVER and keep-first deduplication by event time (one table): every emitted row must equal
    its batch row; the other input rows are late or still pending behind the watermark. Joins,
    GROUP BY and TopN emit every change at once: the materialized changelog must equal the
    batch result over the same input. A window aggregate emits each key's window once, when it
    fires: every emitted window must equal its batch row over the input without the late rows
    (and (row, window) pairs); the other batch rows are windows still pending."""
    record = lifecycle.run_record(state, run_dir.name)
    if record is None:
        raise InputError(f"query {cfg.name}: interval {run_dir.name} has no completed stream "
                         "step (stream_increment) to check")
    return _check(cfg, spark, state, record, run_dir, whole=False)


def audit(cfg: QueryConfig, spark: SparkSession, state: Path, out: Path) -> dict:
    """The full audit (the audit DAG's step): every row the query's stream has emitted up to
    its newest run against batch over all input retained by then. It also catches what a
    run's own parity cannot: a row emitted by two runs, and (OVER and window aggregates by
    event time) an on-time row or window the watermark has passed that no run emitted. It
    reads only what the newest recorded run committed, so it may run while a query run
    streams. Writes ``out``/audit.json."""
    keys = lifecycle.run_keys(state)
    if not keys:
        raise InputError(f"query {cfg.name}: no run to audit yet")
    return _check(cfg, spark, state, lifecycle.run_record(state, keys[-1]), out, whole=True)


def _check(cfg: QueryConfig, spark: SparkSession, state: Path, record: dict, out: Path,
           whole: bool) -> dict:
    """Parity of the run of ``record`` (``whole``: of everything emitted up to it)."""
    same_build(cfg, state)
    # The split the state was built with (the config may have changed since): same result.
    plan = plan_for(cfg, spark, record["topn_split"])
    exempt = not_comparable(plan)
    if exempt:
        report = {"verdict": "not_applicable", "reason": exempt}
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
    input_rows = sum(record["rows"].get(t, 0) for t in tables)
    scope = None if whole else _touched(spark, plan, state, record, files, stream, waits)
    keep = None if scope is None else scope[0]
    if waits:
        key = tables[0]
        late, late_windows = _late_so_far(spark, state, record["last_batch"])
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
            now = record["report"]["watermark"]
            now = -2**63 if now is None else pd.Timestamp(now).value // 1_000_000
            if len(identity) > 1:  # windows still open: their end - 1 is past the watermark
                pending_windows = full.where(F.col(EMIT_TS) > now).count()
            if whole:
                unemitted = _unemitted(plan, full, ids, identity, now, columns)
            else:
                write_csv_frame(batch, out / "batch.csv", types, columns,
                                order=[EMIT_TS, ROWNUM])
        finally:
            full.unpersist()
        late_count = 0 if late is None else late.count()
        report = {"verdict": "equal_for_emitted_rows" if diff.equal else "failed",
                  "late_rows": late_count, "parity_input": {
                      "from_event_time": None if cut is None else
                      str(pd.Timestamp(cut, unit="ms")), "staged_parts": len(files[key]),
                      **({} if scope is None else scope[2])}}
        total = record["report"]["emitted_rows_total"]
        emitted = total if whole else record["report"]["emitted_rows"]
        if len(identity) > 1:  # a window's row stands for its key's window, not an input row
            report.update(emitted_windows=emitted, emitted_windows_total=total,
                          pending_windows=pending_windows,
                          late_row_windows=0 if late_windows is None else late_windows.count())
        else:
            report.update(emitted_rows=emitted, emitted_rows_total=total,
                          pending_rows=input_rows - late_count - total)
        if unemitted is not None:
            report["unemitted_behind_watermark"] = unemitted
            if unemitted["rows"]:
                report["verdict"] = "failed"
        splits = record["report"]["session_splits_total"]
        if not diff.equal and splits:  # as in `twinflow run`
            report.update(session_splits_differ(splits))
    else:
        if scope is not None:  # the result of the keys the run touched (the others kept theirs)
            stream = scope[1]
        batch = batch_dataframe(spark, plan, files, keep_keys=keep).persist()
        try:
            report, diff = verdict(plan, batch, stream, types, columns,
                                   _explanations(spark, plan, state, record))
            if not whole:
                write_csv_frame(batch, out / "batch.csv", types, columns,
                                order=[c for c in (EMIT_TS, ROWNUM) if c in batch.columns])
            if scope is not None:
                report["parity_input"] = scope[2]
        finally:
            batch.unpersist()
    report.update(input_rows=input_rows, **diff.summary())
    if whole:
        report.update(interval=record["report"]["interval"], last_batch=record["last_batch"])
    _report(out, whole, report)
    shutil.rmtree(out / ".result", ignore_errors=True)  # the audit's merged result, if any
    if whole:
        metrics.record_audit(state, record["report"]["interval"], report["verdict"])
    else:
        metrics.record_outcome(state, record["report"]["interval"], parity=report["verdict"])
    if report["verdict"] == "failed":
        lost = report.get("unemitted_behind_watermark", {}).get("rows")
        raise ParityError(f"query {cfg.name}: stream and batch differ"
                          f"{' (audit)' if whole else ''}: {diff.summary(3)}"
                          + (f"; {lost} row(s) behind the watermark never emitted: "
                             f"{report['unemitted_behind_watermark']['sample'][:3]}"
                             if lost else ""))
    return report


def _touched(spark: SparkSession, plan: Node, state: Path, record: dict,
             files: dict[str, list[Path]], stream: DataFrame, waits: bool
             ) -> tuple[dict[str, DataFrame], DataFrame, dict] | None:
    """A run's parity over the keys it touched (parity_scope.key_scope): per table the key
    values whose rows batch reads, the run's result restricted to them, and what the report
    says of them; None where all input is compared (no key scope, the first run, a replay)."""
    scope = key_scope(plan)
    previous = lifecycle.previous_record(state, record["report"]["interval"])
    if scope is None or previous is None or record["replayed"]:
        return None
    names = [f"tw__key{i}" for i in range(len(scope.output))]
    shown_keys = stream.select(*[stream[c].alias(n) for c, n in zip(scope.output, names)])
    if waits:  # the keys of the rows it emitted (some arrived in earlier runs)
        touched = shown_keys
    else:  # the keys of its new input rows
        touched = None
        tables = source_tables(plan)
        for table, cols in scope.inputs.items():
            new = [str(p) for p in files[table][previous["parts"].get(table, 0):]]
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
    return keep, shown, {"touched_keys": touched.count(), "key": list(scope.output)}


def _report(out: Path, whole: bool, report: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / ("audit.json" if whole else "parity.json"), report)


def _unemitted(plan: Node, full: DataFrame, ids: DataFrame, identity: list[str], now: int,
               columns: list[str]) -> dict | None:
    """On-time batch rows (windows) that the watermark ``now`` has passed and the stream never
    emitted (``ids``: the identities it emitted): lost rows. None where a batch row has no
    emission time (deduplication)."""
    node = time_operator(plan)
    if not isinstance(node, (Over, WindowAggregate)) or node.time_kind != "rowtime":
        return None
    lost = full.join(ids, identity, "left_anti").where(F.col(EMIT_TS) <= now)
    sample = [[None if v is None else str(v) for v in r]
              for r in lost.select(*columns).limit(SAMPLE).collect()]
    return {"rows": lost.count(), "sample": sample}

