"""The stream planner's joins: regular joins with retraction (stream/join.py), window joins
(stream/window_join.py), interval and temporal joins (stream/interval_join.py,
temporal_join.py, proctime_temporal_join.py), lookup joins (stream/lookup_join.py)."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from operators_lib.plan import (
    BATCH,
    EMIT_TS,
    OP,
    ROWNUM,
    Cond,
    Join,
    late_tag,
    quote,
    scans,
    unique_key,
)
from operators_lib.relational import carried, spark_join, with_ttl_key
from operators_lib.sql.windows import windowed_by
from operators_lib.stream.event_time import TIME_MS
from operators_lib.stream.interval_join import IntervalJoinProcessor, IntervalJoinSpec
from operators_lib.stream.join import LAYOUTS, SIDE, JoinProcessor, JoinSpec, SideSpec
from operators_lib.stream.keying import (
    CHANGELOG_FIELDS,
    bucketed,
    changelog_columns,
    transform_with_state,
    window_bucket,
)
from operators_lib.stream.lookup_join import lookup_join_stream
from operators_lib.stream.proctime_temporal_join import ProcTimeTemporalJoinProcessor
from operators_lib.stream.rows import BUCKET
from operators_lib.stream.runner import SparkRuntime
from operators_lib.stream.temporal_join import TemporalJoinProcessor, TemporalJoinSpec
from operators_lib.stream.window_agg import (
    WE,
    WS,
)
from operators_lib.stream.window_join import (
    WindowJoinSpec,
    WindowRowsJoinProcessor,
    join_windows,
)


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
        ops, rownum = changelog_columns(df, node.ttl_ms)
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
    union = window_bucket(union, keys)
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
    union = window_bucket(union, keys)
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
