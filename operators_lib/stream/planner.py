"""Stream planner: the logical plan as a streaming query over staged micro-batch files.

Sources and stateful processors come from a runtime (stream/runner.py): Structured Streaming in
the product, the in-memory operator harness in tests. Every select here keeps the runtime's
``carried`` columns (the harness's micro-batch id), so both run the same plan.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from operators_lib.errors import VALUE_REFUSED
from operators_lib.plan import (
    BATCH,
    EMIT_TS,
    END_FIRST,
    MARKERS,
    OP,
    ROWNUM,
    SWEEP_FIRST,
    Aggregate,
    Cond,
    Filter,
    Join,
    Node,
    Over,
    Project,
    Rank,
    Scan,
    SessionRows,
    WindowAggregate,
    first_row_dedup,
    late_tag,
    lookup_scans,
    monotonicity,
    processing_time_windows,
    quote,
    scans,
    unique_key,
)
from operators_lib.relational import build, carried, filter_rows, spark_join, with_ttl_key
from operators_lib.scan import with_columns
from operators_lib.sql.windows import windowed_by
from operators_lib.stream.dedup import FirstRowProcessor
from operators_lib.stream.event_time import TIME_MS
from operators_lib.stream.group_agg import AggSpec, GroupAggProcessor
from operators_lib.stream.interval_join import IntervalJoinProcessor, IntervalJoinSpec
from operators_lib.stream.join import LAYOUTS, SIDE, JoinProcessor, JoinSpec, SideSpec
from operators_lib.stream.lookup_join import lookup_join_stream, static_table
from operators_lib.stream.over import OverProcessor, OverSpec
from operators_lib.stream.proctime_temporal_join import ProcTimeTemporalJoinProcessor
from operators_lib.stream.protocol import Processor
from operators_lib.stream.rows import BUCKET, BUCKETS, NOW, SLOT, SLOTS, key_names, value_kind
from operators_lib.stream.runner import SPARK, SparkRuntime
from operators_lib.stream.temporal_join import TemporalJoinProcessor, TemporalJoinSpec
from operators_lib.stream.topn import TopNProcessor, TopNSpec, keep_batch_top
from operators_lib.stream.window_agg import (
    WE,
    WS,
    SessionRowsProcessor,
    WindowAggProcessor,
    WindowAggSpec,
)
from operators_lib.stream.window_join import (
    WindowJoinSpec,
    WindowRowsJoinProcessor,
    join_windows,
)
from operators_lib.stream.window_rank import (
    WindowRankSpec,
    WindowRowsRankProcessor,
    rank_windows,
)
from operators_lib.topn_split import SPLIT

_TIME_TEXT = "yyyy-MM-dd HH:mm:ss.SSSSSS"  # a TIMESTAMP through a Python processor
PREFILTER_ROWS = 1000  # micro-batch rows from which the TopN pre-filter pays for its stage
_GLOBAL = "tw__global"
# What every processor emits after its own columns.
CHANGELOG_FIELDS = [T.StructField(OP, T.StringType()), T.StructField(EMIT_TS, T.LongType()),
                    T.StructField(ROWNUM, T.LongType())]


def stream_dataframe(spark: SparkSession, plan: Node, dirs: dict[str, Path],
                     rows_per_batch: int | None = None, runtime: SparkRuntime = SPARK
                     ) -> DataFrame:
    """``dirs``: staged directory per table (lower-case name); adds tw__op/tw__ts/tw__rownum.
    ``rows_per_batch`` (None: large): micro-batches this small skip the TopN's per-batch
    pre-filter, which costs a Python stage per micro-batch (stream/topn.py)."""

    # Processing-time windows: the stream's watermark is processing time (stream/runner.py).
    proctime = bool(processing_time_windows(plan))

    # Every source before any operator: the watermark is the query's, the least of its
    # tables' (the operator harness computes it when an operator is planned).
    # A lookup join's table is read whole, not streamed (stream/lookup_join.py).
    static = {id(s) for s in lookup_scans(plan)}
    opened = {id(node): static_table(spark, node.table, dirs[node.table.name.lower()])
              if id(node) in static else
              runtime.source(spark, node.table, dirs[node.table.name.lower()], proctime)
              for node in scans(plan)}

    def scan(node: Scan) -> DataFrame:
        return with_columns(opened[id(node)], node.table)

    prefilter = runtime.per_batch_stages and (
        rows_per_batch is None or rows_per_batch >= PREFILTER_ROWS)
    df = build(plan, scan, {Filter: partial(filter_rows, sweeps=True),
                            Over: partial(over_stream, runtime=runtime),
                            Join: partial(join_stream, runtime=runtime),
                            Aggregate: partial(aggregate_stream, runtime=runtime),
                            Rank: partial(rank_stream, runtime=runtime, prefilter=prefilter),
                            WindowAggregate: partial(window_stream, runtime=runtime),
                            SessionRows: partial(session_rows_stream, runtime=runtime)})
    if OP not in df.columns:  # append-only (stateless, inner joins): every row is an insert
        df = df.withColumn(OP, F.lit("+I"))
    elif _emits_changelog(_last_stateful(plan)):
        # Below the sink tw__rownum is a row's arrival (TopN ranks ties by it); the sink orders
        # rows by it, and a changelog's rows must keep the order they were emitted in.
        df = df.withColumn(ROWNUM, F.when(F.col(OP).isin(*MARKERS) | (F.col(ROWNUM) < 0),
                                          F.col(ROWNUM)).otherwise(F.lit(0).cast("long")))
    if EMIT_TS not in df.columns:
        df = df.withColumn(EMIT_TS, F.lit(0).cast("long"))
    return df


def _emits_changelog(node: Node) -> bool:
    """Does the operator emit changes as they happen (not in event-time order, as OVER and
    keep-first deduplication do)?"""
    if isinstance(node, Rank):
        return not first_row_dedup(node) and not node.windowed
    return isinstance(node, (Join, Aggregate))


def _last_stateful(plan: Node) -> Node:
    while isinstance(plan, (Filter, Project)):
        plan = plan.child
    return plan


def over_stream(node: Over, df: DataFrame, runtime: SparkRuntime) -> DataFrame:
    """The OVER processor (stream/over.py) by bucket of partition keys."""
    user = [c for c in df.columns if not c.startswith("tw__")]
    alias = {c: f"c{i}" for i, c in enumerate(user)}
    safe = df.select(*[F.col(quote(c)).alias(alias.get(c, c)) for c in df.columns])
    internal = {ROWNUM} | {a.arg for a in node.aggs if a.arg} | {
        p for p in node.partition_by if p.startswith("tw__p")}
    passthrough = tuple(alias[c] for c in user if c not in internal)
    schema = {f.name: f for f in safe.schema.fields}
    out = T.StructType(
        [schema[c] for c in passthrough]
        + [T.StructField(a.name, a.type.spark()) for a in node.aggs]
        + CHANGELOG_FIELDS)
    keyed = safe.select("*", F.unix_millis(F.col(alias.get(node.order_by, node.order_by)))
                        .alias(TIME_MS))
    keyed, keys = grouping_keys(keyed, [alias.get(p, p) for p in node.partition_by])
    proctime = node.time_kind == "proctime"
    result = arrow_transform(runtime, keyed, keys, lambda arrow: OverProcessor(OverSpec(
        node.frame, node.aggs, passthrough, tuple(_pandas_dtype(a.type) for a in node.aggs),
        tuple(keys), arrow, proctime=proctime)), out, "None" if proctime else "EventTime")
    original = {v: k for k, v in alias.items()}
    return result.select(*[F.col(c).alias(original.get(c, c)) for c in result.columns])


def arrow_transform(runtime: SparkRuntime, df: DataFrame, keys: list[str],
                    make: Callable[[pa.Schema], Processor], out: T.StructType,
                    time_mode: str) -> DataFrame:
    """An Arrow processor (stream/packing.py), made by ``make`` for its output's Arrow
    schema, over ``df`` by bucket of ``keys``; TIME columns cross as microseconds of the day
    (Spark takes no TIME from Arrow)."""
    df = refuse_computed_nan(df)
    times = {f.name for f in df.schema.fields if isinstance(f.dataType, T.TimeType)}
    micros = df.select(*[(F.time_to_micros(quote(c)) if c in times else F.col(quote(c))).alias(c)
                         for c in df.columns])
    back = {f.name: f.dataType for f in out.fields if isinstance(f.dataType, T.TimeType)}
    crossing = T.StructType([T.StructField(f.name, T.LongType()) if f.name in back else f
                             for f in out.fields])
    result = runtime.apply(_window_bucket(micros, keys), [BUCKET],
                           make(to_arrow_schema(crossing, timezone="UTC")), crossing, time_mode)
    return result.select(*[(F.time_from_micros(quote(f.name)).cast(back[f.name])
                            if f.name in back else F.col(quote(f.name))).alias(f.name)
                           for f in out.fields], *carried(result))


def transform_with_state(runtime: SparkRuntime, df: DataFrame, keys: list[str], processor,
                         out: T.StructType, time_mode: str) -> DataFrame:
    """``processor`` over ``df`` grouped by ``keys`` on the runtime (transformWithStateInPandas)
    with TIMESTAMP columns carried as text both ways: pyspark hands timestamps to pandas in
    nanoseconds, which end in 2262, and a TIMESTAMP goes to 9999. The fixed-width text (years
    0001-9999) sorts and compares as the instants do, so the processors need not know."""
    def timestamp(f: T.StructField) -> bool:
        return isinstance(f.dataType, T.TimestampType)

    df = refuse_computed_nan(df)
    text = df.select(*[F.date_format(quote(f.name), _TIME_TEXT).alias(f.name) if timestamp(f)
                       else F.col(quote(f.name)) for f in df.schema.fields])
    text_out = T.StructType([T.StructField(f.name, T.StringType()) if timestamp(f) else f
                             for f in out.fields])
    result = runtime.apply(text, keys, processor, text_out, time_mode)
    return result.select(*[F.to_timestamp(quote(f.name), _TIME_TEXT).alias(f.name)
                           if timestamp(f) else F.col(quote(f.name)) for f in out.fields],
                         *carried(result))


def refuse_computed_nan(df: DataFrame) -> DataFrame:
    """``df`` as it enters a stateful processor, failing the run (exit 2) on a NaN in a FLOAT
    or DOUBLE column: the processors hold rows in pandas, where NaN is NULL. NaN from the
    input never gets here (sql/nonfinite.py refuses it before the run); this one was computed
    on the way (LOG(1, 1), SQRT(-1), 0.0 / 0.0, ...), where Flink's operators keep NaN."""
    def checked(f: T.StructField):
        if not isinstance(f.dataType, (T.DoubleType, T.FloatType)):
            return F.col(quote(f.name))
        c = F.col(quote(f.name))
        row = F.concat(F.lit(" (input row "), F.col(ROWNUM).cast("string"), F.lit(")")) \
            if ROWNUM in df.columns else F.lit("")
        return F.when(F.isnan(c), F.raise_error(F.concat(F.lit(
            f"{VALUE_REFUSED}a NaN computed (by LOG, SQRT, 0.0 / 0.0, ..) on its way into a stream "
            "operator (an aggregate, join, OVER or TopN), which cannot tell NaN from NULL; "
            "batch mode gives Flink's answer"), row))
        ).otherwise(c).alias(f.name)
    if not any(isinstance(f.dataType, (T.DoubleType, T.FloatType)) for f in df.schema.fields):
        return df
    return df.select(*[checked(f) for f in df.schema.fields])


def _window_bucket(df: DataFrame, keys) -> DataFrame:
    """``df`` with the bucket of a window operator's keys (one bucket without keys); an
    end-of-input marker of the last part goes to the bucket it names (plan.END_FIRST)."""
    bucket = F.when(F.col(ROWNUM) <= END_FIRST, F.lit(END_FIRST) - F.col(ROWNUM)).otherwise(
        F.pmod(F.xxhash64(*[F.col(k) for k in keys]), F.lit(BUCKETS))) if keys else F.lit(0)
    return df.withColumn(BUCKET, bucket.cast("long"))


def _pandas_dtype(t) -> str:
    if t.is_integral:
        return "Int64"
    if t.is_floating:
        return "float64"
    return "object"


def _default(dtype: T.DataType):
    if isinstance(dtype, T.StringType):
        return F.lit("")
    if isinstance(dtype, T.BooleanType):
        return F.lit(False)
    if isinstance(dtype, T.DateType):
        return F.expr("DATE'1970-01-01'")
    if isinstance(dtype, T.TimeType):
        return F.expr("TIME'00:00:00'").cast(dtype)
    return F.lit(0).cast(dtype)


def grouping_keys(df: DataFrame, cols: list[str]) -> tuple[DataFrame, list[str]]:
    """Grouping columns for transformWithState that are never NULL: a NULL flag plus the value
    with NULL replaced by a default. (pyspark hands a nullable integer key to Python as float64
    once a NULL is in the batch, and then files state under the wrong key.) No columns: one
    global key, as Flink runs an operator without keys on one partition."""
    if not cols:
        return df.withColumn(_GLOBAL, F.lit(0)), [_GLOBAL]
    extra, names = [], []
    for i, c in enumerate(cols):
        col, (null, value) = F.col(quote(c)), key_names(i)
        extra += [col.isNull().alias(null),
                  F.coalesce(col, _default(df.schema[c].dataType)).alias(value)]
        names += [null, value]
    return df.select("*", *extra), names


def bucketed(df: DataFrame, cols: list[str]) -> tuple[DataFrame, list[str]]:
    """``df`` with the state slot and the bucket of its operator key (``grouping_keys`` of
    ``cols``; stream/rows.py: one Python call per bucket, one state value per slot), and the
    key's columns."""
    df, keys = grouping_keys(df, cols)
    slot = F.pmod(F.xxhash64(*keys), F.lit(SLOTS))
    # A state sweep row goes to the bucket it names (plan.SWEEP_FIRST): one to each.
    bucket = F.when(F.col(ROWNUM) <= SWEEP_FIRST, F.lit(SWEEP_FIRST) - F.col(ROWNUM)) \
        .otherwise(F.pmod(F.col(SLOT), F.lit(BUCKETS)))
    return df.withColumn(SLOT, slot).withColumn(BUCKET, bucket), keys


def _changelog_columns(df: DataFrame, ttl_ms: int | None) -> tuple[list, list]:
    """(op, rownum [+ the TTL clock]) columns of an input: append-only inputs are all +I."""
    op = F.col(OP) if OP in df.columns else F.lit("+I")
    now = [F.unix_millis(F.current_timestamp()).alias(NOW)] if ttl_ms else []
    return [op.alias(OP)], [F.col(ROWNUM), *now]


def join_layout(node: Join, side: str) -> tuple[str, tuple[int, ...]]:
    """The state layout of one join input (see stream/join.py) and its unique key positions."""
    child = node.left if side == "L" else node.right
    keys = node.left_keys if side == "L" else node.right_keys
    uk = unique_key(child)
    if uk is None:
        return LAYOUTS[2], ()
    if set(uk) <= set(keys):
        return LAYOUTS[0], ()
    names = [f.name for f in child.fields]
    return LAYOUTS[1], tuple(names.index(k) for k in uk)


def join_stream(node: Join, left: DataFrame, right: DataFrame, runtime: SparkRuntime
                ) -> DataFrame:
    if node.temporal and node.temporal.lookup:
        return lookup_join_stream(node, left, right)
    # Append-only inputs, no TTL: the inner join emits each match once and never retracts.
    append_only = (node.kind == "INNER" and node.left_keys and not node.ttl_ms
                   and not (node.interval or node.temporal)
                   and OP not in left.columns and OP not in right.columns)
    if append_only and node.windowed:
        # Window TVFs' rows joined on their windows: Spark's stream-stream inner join keeps
        # every row in state and emits each match once, the same join as batch.
        return spark_join(node, left, right)
    lf, rf = node.left.fields, node.right.fields
    lcols = tuple(f"l{i}" for i in range(len(lf)))
    rcols = tuple(f"r{i}" for i in range(len(rf)))
    nkeys = max(1, len(node.left_keys))

    def side(df: DataFrame, tag: int, keys, mine, theirs, names, other_fields) -> DataFrame:
        key_cols = [F.col(quote(k)).alias(f"k{i}") for i, k in enumerate(keys)] or [
            F.lit(0).alias("k0")]  # no equality key: one global partition, as in Flink
        ops, rownum = _changelog_columns(df, node.ttl_ms)
        emitted = [F.col(EMIT_TS)] if node.windowed == "aggregate" else []
        return df.select(
            *key_cols,
            *[F.col(quote(n)).alias(c) for n, c in zip(names, mine)],
            *[F.lit(None).cast(f.type.spark()).alias(c) for f, c in zip(other_fields, theirs)],
            *ops, *rownum, *emitted, F.lit(tag).alias(SIDE), *carried(df))

    lside = side(left, 0, node.left_keys, lcols, rcols, [f.name for f in lf], rf)
    rside = side(right, 1, node.right_keys, rcols, lcols, [f.name for f in rf], lf)
    rside = rside.select(*lside.columns)
    if node.windowed == "aggregate":
        return _window_join_stream(node, lside.unionByName(rside), lcols, rcols)
    if node.windowed == "rows":
        return _window_rows_join_stream(node, lside.unionByName(rside), lcols, rcols, runtime)
    if node.interval or node.temporal:
        return _time_join_stream(node, lside.unionByName(rside), lcols, rcols, runtime)
    (llayout, luk), (rlayout, ruk) = join_layout(node, "L"), join_layout(node, "R")
    lnames, rnames = tuple(f.name for f in lf), tuple(f.name for f in rf)
    rename = {**dict(zip(lcols, lnames)), **dict(zip(rcols, rnames))}
    spec = JoinSpec(
        node.kind,
        SideSpec(lcols, lnames, node.kind in ("LEFT", "FULL"), llayout, luk,
                 tuple(lnames.index(k) for k in node.left_keys)),
        SideSpec(rcols, rnames, node.kind in ("RIGHT", "FULL"), rlayout, ruk,
                 tuple(rnames.index(k) for k in node.right_keys)),
        node.residual, node.ttl_ms)
    shown = (lcols, lf) if node.kind in ("SEMI", "ANTI") else (lcols + rcols, lf + rf)
    out = T.StructType(
        [T.StructField(c, f.type.spark()) for c, f in zip(*shown)]
        + CHANGELOG_FIELDS)
    keys = [f"k{i}" for i in range(nkeys)]
    # NULL never matches: the processor sees the NULL flags (and never stores such rows).
    union, key_cols = bucketed(lside.unionByName(rside), keys)
    result = transform_with_state(runtime, union.drop(*keys), [BUCKET],
                                  JoinProcessor(spec, key_cols), out, "None")
    if append_only:  # every row is +I: the result stays append-only for what reads it
        result = result.drop(OP)
    return with_ttl_key(node, result.select(*[F.col(c).alias(rename.get(c, c))
                                              for c in result.columns]))


def _window_join_stream(node: Join, union: DataFrame, lcols: tuple[str, ...],
                        rcols: tuple[str, ...]) -> DataFrame:
    """A join of two window aggregates (stream/window_join.py): each micro-batch of both sides
    hash-partitioned by the equality keys (and the harness's micro-batch id), joined per
    task."""
    keys = tuple(f"k{i}" for i in range(len(node.left_keys)))
    batch = (BATCH,) if BATCH in union.columns else ()
    spec = WindowJoinSpec(node.kind, keys, lcols, rcols, batch,
                          residual=_union_residual(node, lcols, rcols))
    fields = {f.name: f for f in union.schema.fields}
    schema = T.StructType([fields[c] for c in (*spec.output, OP, EMIT_TS, ROWNUM, *batch)])
    result = union.repartition(*[F.col(c) for c in (*keys, *batch)]).mapInArrow(
        partial(join_windows, spec=spec), schema)
    rename = dict(zip(lcols + rcols, [f.name for f in node.left.fields + node.right.fields]))
    return result.select(*[F.col(c).alias(rename.get(c, c)) for c in result.columns])


def _union_residual(node: Join, lcols: tuple[str, ...], rcols: tuple[str, ...]) -> Cond | None:
    """The join's residual condition over the union's column names."""
    names = dict(zip([f.name for f in node.left.fields + node.right.fields], lcols + rcols))

    def renamed(c):
        if isinstance(c, str):
            return names[c]
        return replace(c, args=tuple(renamed(a) for a in c.args))
    return renamed(node.residual) if node.residual is not None else None


def _window_rows_join_stream(node: Join, union: DataFrame, lcols: tuple[str, ...],
                             rcols: tuple[str, ...], runtime: SparkRuntime) -> DataFrame:
    """A window join of two window TVFs' rows (stream/window_join.py): rows wait in bucket
    pages, by their equality keys, until their window fires."""
    keys = tuple(f"k{i}" for i in range(len(node.left_keys)))
    _, (start, end) = windowed_by(node.left, node.left_keys)
    union = union.select("*", F.unix_millis(F.col(keys[node.left_keys.index(start)])).alias(WS),
                         F.unix_millis(F.col(keys[node.left_keys.index(end)])).alias(WE))
    union = _window_bucket(union, keys)
    tags = tuple(late_tag(s[0].table.name) if len(s) == 1 else 0
                 for s in (scans(node.left), scans(node.right)))
    spec = WindowJoinSpec(node.kind, keys, lcols, rcols, (), tuple(
        c for c, f in zip(lcols + rcols, node.left.fields + node.right.fields)
        if f.type.is_integral), _union_residual(node, lcols, rcols))
    fields = {f.name: f for f in union.schema.fields}
    out = T.StructType([fields[c] for c in spec.output] + CHANGELOG_FIELDS)
    result = transform_with_state(runtime, union, [BUCKET], WindowRowsJoinProcessor(spec, tags),
                                  out, "EventTime")
    rename = dict(zip(lcols + rcols, [f.name for f in node.left.fields + node.right.fields]))
    return result.select(*[F.col(c).alias(rename.get(c, c)) for c in result.columns])


def _time_join_stream(node: Join, union: DataFrame, lcols: tuple[str, ...],
                      rcols: tuple[str, ...], runtime: SparkRuntime) -> DataFrame:
    """An interval join (stream/interval_join.py: rows wait while the watermark lets a row of
    the other side still match them), an event-time temporal join (stream/temporal_join.py:
    left rows wait for the watermark, versions until a newer one passes it) or a processing-
    time one (stream/proctime_temporal_join.py: the latest version per key), in bucket pages
    by their equality keys."""
    keys = tuple(f"k{i}" for i in range(max(1, len(node.left_keys))))
    timed, lf, rf = node.interval or node.temporal, node.left.fields, node.right.fields
    ltime = F.col(lcols[[f.name for f in lf].index(timed.left_time)])
    rtime = F.col(rcols[[f.name for f in rf].index(timed.right_time)]) \
        if timed.right_time else F.lit(None).cast("timestamp")
    union = union.withColumn(TIME_MS, F.unix_millis(
        F.when(F.col(SIDE) == 0, ltime).otherwise(rtime)))
    union = _window_bucket(union, keys)
    tags = tuple(late_tag(s[0].table.name) for s in (scans(node.left), scans(node.right)))
    integral = tuple(c for c, f in zip(lcols + rcols, lf + rf) if f.type.is_integral)
    residual = _union_residual(node, lcols, rcols)
    if node.interval:
        processor = IntervalJoinProcessor(IntervalJoinSpec(
            node.kind, keys, lcols, rcols, node.interval.lower_ms, node.interval.upper_ms,
            tags, integral, residual))
    else:
        spec = TemporalJoinSpec(node.kind, keys, lcols, rcols, node.temporal.dedup, tags,
                                integral, residual)
        processor = ProcTimeTemporalJoinProcessor(spec) if node.temporal.time_kind == \
            "proctime" else TemporalJoinProcessor(spec)
    fields = {f.name: f for f in union.schema.fields}
    out = T.StructType([fields[c] for c in lcols + rcols] + CHANGELOG_FIELDS)
    result = transform_with_state(runtime, union, [BUCKET], processor, out, "None" if isinstance(
        processor, ProcTimeTemporalJoinProcessor) else "EventTime")
    rename = dict(zip(lcols + rcols, [f.name for f in lf + rf]))
    return result.select(*[F.col(c).alias(rename.get(c, c)) for c in result.columns])


def aggregate_stream(node: Aggregate, df: DataFrame, runtime: SparkRuntime) -> DataFrame:
    fields = {f.name: f for f in node.child.fields}
    keys = tuple(f"g{i}" for i in range(len(node.group_by)))
    args = {a.arg: f"a{i}" for i, a in enumerate(node.aggs) if a.arg}
    outputs = tuple(f"o{i}" for i in range(len(node.aggs)))
    ops, rownum = _changelog_columns(df, node.ttl_ms)
    safe = df.select(*[F.col(quote(g)).alias(k) for g, k in zip(node.group_by, keys)],
                     *[F.col(quote(a)).alias(c) for a, c in args.items()], *ops, *rownum,
                     *carried(df))
    safe, key_cols = bucketed(safe, list(keys))
    spec = AggSpec(keys, tuple(value_kind(fields[g].type) for g in node.group_by),
                   tuple(replace(a, arg=args.get(a.arg)) for a in node.aggs),
                   tuple(value_kind(a.arg_type) if a.arg else "" for a in node.aggs), outputs,
                   node.ttl_ms, node.ranked)
    out = T.StructType(
        [T.StructField(k, fields[g].type.spark()) for k, g in zip(keys, node.group_by)]
        + [T.StructField(o, a.type.spark()) for o, a in zip(outputs, node.aggs)]
        + CHANGELOG_FIELDS)
    result = transform_with_state(runtime, safe, [BUCKET], GroupAggProcessor(spec, key_cols),
                                  out, "None")
    rename = {**dict(zip(keys, node.group_by)), **{o: a.name for o, a in zip(outputs, node.aggs)}}
    return with_ttl_key(node, result.select(*[F.col(c).alias(rename.get(c, c))
                                              for c in result.columns]))


def window_stream(node: WindowAggregate, df: DataFrame, runtime: SparkRuntime) -> DataFrame:
    fields = {f.name: f for f in node.child.fields}
    keys = tuple(f"g{i}" for i in range(len(node.group_by)))
    args = {a.arg: f"a{i}" for i, a in enumerate(node.aggs) if a.arg}
    outputs = tuple(f"o{i}" for i in range(len(node.aggs)))
    bounds = ("tw__wstart", "tw__wend", "tw__wtime")
    given = [F.unix_millis(F.col(quote(b))).alias(c) for b, c in zip(node.bounds, (WS, WE))
             ] if node.window.kind == "GIVEN" else []
    safe = df.select(*[F.col(quote(g)).alias(k) for g, k in zip(node.group_by, keys)],
                     *[F.col(quote(a)).alias(c) for a, c in args.items()],
                     F.unix_millis(F.col(quote(node.time_col))).alias(TIME_MS), *given,
                     F.col(ROWNUM), *[F.col(c) for c in (OP, EMIT_TS) if c in df.columns],
                     *carried(df))
    safe = _window_bucket(safe, keys)
    aggs = tuple(replace(a, arg=args.get(a.arg), name=o) for a, o in zip(node.aggs, outputs))
    spec = WindowAggSpec(node.window, keys, tuple(value_kind(fields[g].type)
                                                  for g in node.group_by), aggs,
                         tuple(_pandas_dtype(a.type) for a in node.aggs), bounds,
                         cascaded=node.source is None,
                         late_tag=late_tag(node.source.name) if node.source else 0,
                         proctime=node.time_kind == "proctime", hold_ms=node.hold_ms)
    out = T.StructType(
        [T.StructField(k, fields[g].type.spark()) for k, g in zip(keys, node.group_by)]
        + [T.StructField(b, T.TimestampType()) for b in bounds]
        + [T.StructField(o, a.type.spark()) for o, a in zip(outputs, node.aggs)]
        + CHANGELOG_FIELDS)
    result = transform_with_state(runtime, safe, [BUCKET], WindowAggProcessor(spec), out,
                                  "EventTime")
    rename = {**dict(zip(keys, node.group_by)), **dict(zip(bounds, node.bounds)),
              **{o: a.name for o, a in zip(outputs, node.aggs)}}
    return result.select(*[F.col(c).alias(rename.get(c, c)) for c in result.columns])


def session_rows_stream(node: SessionRows, df: DataFrame, runtime: SparkRuntime) -> DataFrame:
    """A SESSION TVF's rows (stream/window_agg.SessionRowsProcessor), bucketed by partition."""
    fields = node.fields[:-3]
    cols = tuple(f"c{i}" for i in range(len(fields)))
    keys = tuple(f"g{i}" for i in range(len(node.partition)))
    by_name = {f.name: f for f in fields}
    safe = df.select(*[F.col(quote(f.name)).alias(c) for f, c in zip(fields, cols)],
                     *[F.col(quote(p)).alias(k) for p, k in zip(node.partition, keys)],
                     F.unix_millis(F.col(quote(node.time_col))).alias(TIME_MS), F.col(ROWNUM),
                     *carried(df))
    safe = _window_bucket(safe, keys)
    bounds = ("tw__wstart", "tw__wend", "tw__wtime")
    spec = WindowAggSpec(node.window, keys, tuple(value_kind(by_name[p].type)
                                                  for p in node.partition), (), (), bounds,
                         late_tag=late_tag(node.source.name))
    integral = frozenset(c for c, f in zip(cols, fields) if f.type.is_integral)
    out = T.StructType(
        [T.StructField(c, f.type.spark()) for c, f in zip(cols, fields)]
        + [T.StructField(b, T.TimestampType()) for b in bounds]
        + CHANGELOG_FIELDS)
    result = transform_with_state(runtime, safe, [BUCKET],
                                  SessionRowsProcessor(spec, cols, integral), out, "EventTime")
    rename = {**dict(zip(cols, (f.name for f in fields))),
              **dict(zip(bounds, (f.name for f in node.fields[-3:])))}
    return result.select(*[F.col(c).alias(rename.get(c, c)) for c in result.columns])


def rank_stream(node: Rank, df: DataFrame, runtime: SparkRuntime, prefilter: bool) -> DataFrame:
    fields = node.child.fields
    cols = tuple(f"c{i}" for i in range(len(fields)))
    alias = {f.name: c for f, c in zip(fields, cols)}
    if node.windowed == "aggregate":
        return _window_rank_stream(node, df, cols, alias)
    if node.windowed == "rows":
        return _window_rows_rank_stream(node, df, cols, alias, runtime)
    if first_row_dedup(node):
        return _first_row_stream(node, df, cols, alias, runtime)
    ops, rownum = _changelog_columns(df, None)
    safe = df.select(*[F.col(quote(f.name)).alias(c) for f, c in zip(fields, cols)],
                     *ops, *rownum, *carried(df))
    if prefilter and OP not in df.columns and node.func == "ROW_NUMBER" and not node.dedup:
        partition = [alias[p] for p in node.partition_by]
        order_by = [replace(k, col=alias[k.col]) for k in node.order_by]
        safe = safe.mapInArrow(partial(keep_batch_top, partition=partition, order=order_by,
                                       end=node.end), safe.schema)
    safe, key_cols = bucketed(safe, [alias[p] for p in node.partition_by])
    # Deduplication by processing time: the order is arrival (batch has no processing time).
    order = () if node.dedup and node.time_kind == "proctime" else tuple(
        replace(k, col=alias[k.col]) for k in node.order_by)
    spec = TopNSpec(cols, tuple(value_kind(f.type) for f in fields), order, node.func,
                    node.start, node.end, node.rank_output, OP in df.columns,
                    latest_first=node.dedup == "last",
                    row_key=update_fast(node) if OP in df.columns else None)
    result = transform_with_state(runtime, safe, [BUCKET], TopNProcessor(spec, key_cols, "rank"),
                           _rank_schema(cols, fields), "None")
    return _rank_result(node, result, cols)


def _window_rank_stream(node: Rank, df: DataFrame, cols: tuple[str, ...], alias: dict
                        ) -> DataFrame:
    """Window TopN (stream/window_rank.py): each micro-batch hash-partitioned by the partition
    columns (and the harness's micro-batch id), ranked per task."""
    safe = df.select(*[F.col(quote(f.name)).alias(c) for f, c in zip(node.child.fields, cols)],
                     OP, EMIT_TS, ROWNUM, *carried(df))
    partition = tuple(alias[p] for p in node.partition_by) + (
        (BATCH,) if BATCH in df.columns else ())
    spec = WindowRankSpec(partition, tuple(replace(k, col=alias[k.col]) for k in node.order_by),
                          node.func, node.start, node.end, "rank",
                          latest_first=node.dedup == "last")
    schema = T.StructType([*safe.schema.fields, T.StructField("rank", T.LongType())])
    result = safe.repartition(*[F.col(c) for c in partition]).mapInArrow(
        partial(rank_windows, spec=spec), schema)
    if not node.rank_output:
        result = result.withColumn("rank", F.lit(None).cast("long"))
    return _rank_result(node, result, cols)


def _window_rows_rank_stream(node: Rank, df: DataFrame, cols: tuple[str, ...], alias: dict,
                             runtime: SparkRuntime) -> DataFrame:
    """Window TopN / deduplication over a window TVF's rows (stream/window_rank.py), grouped
    by bucket of the partition's columns other than the window bounds."""
    start, end = node.window_bounds
    keys = [alias[p] for p in node.partition_by if p not in node.window_bounds]
    safe = df.select(*[F.col(quote(f.name)).alias(c) for f, c in zip(node.child.fields, cols)],
                     F.unix_millis(F.col(quote(start))).alias(WS),
                     F.unix_millis(F.col(quote(end))).alias(WE), F.col(ROWNUM), *carried(df))
    safe = _window_bucket(safe, keys)
    spec = WindowRankSpec((WS, WE, *keys), tuple(replace(k, col=alias[k.col])
                                                 for k in node.order_by),
                          node.func, node.start, node.end, "rank",
                          latest_first=node.dedup == "last")
    result = transform_with_state(runtime, safe, [BUCKET], WindowRowsRankProcessor(
        spec, cols, late_tag(node.source.name) if node.source else 0),
                                  _rank_schema(cols, node.child.fields), "EventTime")
    if not node.rank_output:
        result = result.withColumn("rank", F.lit(None).cast("long"))
    return _rank_result(node, result, cols)


def _rank_schema(cols: tuple[str, ...], fields) -> T.StructType:
    """The output of a TopN processor: its input columns, the rank, the changelog columns."""
    return T.StructType(
        [T.StructField(c, f.type.spark()) for c, f in zip(cols, fields)]
        + [T.StructField("rank", T.LongType())] + CHANGELOG_FIELDS)


def _rank_result(node: Rank, result: DataFrame, cols: tuple[str, ...]) -> DataFrame:
    return result.select(*[F.col(c).alias(f.name) for c, f in zip(cols, node.child.fields)],
                         F.col("rank").alias(node.rank_field), OP, EMIT_TS, ROWNUM,
                         *carried(result))


def update_fast(node: Rank) -> tuple[int, ...] | None:
    """The unique key's column positions when Flink would run this TopN as its update-fast
    TopN (stream/topn.py): ROW_NUMBER over an input with a unique key that contains the
    partition key, every ORDER BY key constant or moving only up the ranking."""
    key = unique_key(node.child)
    # SPLIT (a hotspot split's sub-partition) is a hash of the unique key (topn_split.py)
    if node.func != "ROW_NUMBER" or not key or not set(node.partition_by) - {SPLIT} <= set(key):
        return None
    for k in node.order_by:
        # As Flink's planner: a MIN / MAX that is NULL (all its arguments NULL) and sorts first
        # would move down once set, which update-fast cannot do (README: a known gap).
        if monotonicity(node.child, k.col) not in ("const", "up" if k.desc else "down"):
            return None
    names = [f.name for f in node.child.fields]
    return tuple(names.index(k) for k in key)


def _first_row_stream(node: Rank, df: DataFrame, cols: tuple[str, ...], alias: dict[str, str],
                      runtime: SparkRuntime) -> DataFrame:
    """Deduplication keeping the first row by event time (stream/dedup.py), by bucket of
    keys."""
    fields = node.child.fields
    time_col = alias[node.order_by[0].col]
    safe = df.select(*[F.col(quote(f.name)).alias(c) for f, c in zip(fields, cols)],
                     F.col(ROWNUM), F.unix_millis(F.col(time_col)).alias(TIME_MS),
                     *carried(df))
    keyed, keys = grouping_keys(safe, [alias[p] for p in node.partition_by])
    result = arrow_transform(runtime, keyed, keys, lambda arrow: FirstRowProcessor(
        cols, tuple(keys), "rank", node.rank_output, arrow), _rank_schema(cols, fields),
        "EventTime")
    return _rank_result(node, result, cols)
