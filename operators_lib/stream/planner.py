"""Stream planner: the logical plan as a streaming query over staged micro-batch files.

Sources and stateful processors come from a runtime (stream/runner.py): Structured Streaming in
the product, the in-memory operator harness in tests. Every select here keeps the runtime's
``carried`` columns (the harness's micro-batch id), so both run the same plan. Joins are
planned in join_stream.py, TopN in rank_stream.py; keying.py keys and runs the processors.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from operators_lib.plan import (
    EMIT_TS,
    MARKERS,
    OP,
    ROWNUM,
    Aggregate,
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
    processing_time_windows,
    quote,
    scans,
)
from operators_lib.relational import build, carried, filter_rows, with_ttl_key
from operators_lib.scan import with_columns
from operators_lib.stream.event_time import TIME_MS
from operators_lib.stream.group_agg import AggSpec, GroupAggProcessor
from operators_lib.stream.join_stream import join_stream
from operators_lib.stream.keying import (
    CHANGELOG_FIELDS,
    arrow_transform,
    bucketed,
    changelog_columns,
    grouping_keys,
    pandas_dtype,
    transform_with_state,
    window_bucket,
)
from operators_lib.stream.lookup_join import static_table
from operators_lib.stream.over import OverProcessor, OverSpec
from operators_lib.stream.rank_stream import PREFILTER_ROWS, rank_stream
from operators_lib.stream.rows import BUCKET, value_kind
from operators_lib.stream.runner import SPARK, SparkRuntime
from operators_lib.stream.window_agg import (
    WE,
    WS,
    SessionRowsProcessor,
    WindowAggProcessor,
    WindowAggSpec,
)


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
        node.frame, node.aggs, passthrough, tuple(pandas_dtype(a.type) for a in node.aggs),
        tuple(keys), arrow, proctime=proctime)), out, "None" if proctime else "EventTime")
    original = {v: k for k, v in alias.items()}
    return result.select(*[F.col(c).alias(original.get(c, c)) for c in result.columns])


def aggregate_stream(node: Aggregate, df: DataFrame, runtime: SparkRuntime) -> DataFrame:
    fields = {f.name: f for f in node.child.fields}
    keys = tuple(f"g{i}" for i in range(len(node.group_by)))
    args = {a.arg: f"a{i}" for i, a in enumerate(node.aggs) if a.arg}
    outputs = tuple(f"o{i}" for i in range(len(node.aggs)))
    ops, rownum = changelog_columns(df, node.ttl_ms)
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
    safe = window_bucket(safe, keys)
    aggs = tuple(replace(a, arg=args.get(a.arg), name=o) for a, o in zip(node.aggs, outputs))
    spec = WindowAggSpec(node.window, keys, tuple(value_kind(fields[g].type)
                                                  for g in node.group_by), aggs,
                         tuple(pandas_dtype(a.type) for a in node.aggs), bounds,
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
    safe = window_bucket(safe, keys)
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
