"""The stream planner's TopN: ranking with retraction (stream/topn.py), window TopN
(stream/window_rank.py) and keep-first deduplication by event time (stream/dedup.py)."""

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
    Rank,
    first_row_dedup,
    late_tag,
    monotonicity,
    quote,
    unique_key,
)
from operators_lib.relational import carried
from operators_lib.stream.dedup import FirstRowProcessor
from operators_lib.stream.event_time import TIME_MS
from operators_lib.stream.keying import (
    CHANGELOG_FIELDS,
    arrow_transform,
    bucketed,
    changelog_columns,
    grouping_keys,
    transform_with_state,
    window_bucket,
)
from operators_lib.stream.rows import BUCKET, value_kind
from operators_lib.stream.runner import SparkRuntime
from operators_lib.stream.topn import TopNProcessor, TopNSpec, keep_batch_top
from operators_lib.stream.window_agg import (
    WE,
    WS,
)
from operators_lib.stream.window_rank import (
    WindowRankSpec,
    WindowRowsRankProcessor,
    rank_windows,
)
from operators_lib.topn_split import SPLIT

PREFILTER_ROWS = 1000  # micro-batch rows from which the TopN pre-filter pays for its stage


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
    ops, rownum = changelog_columns(df, None)
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
    safe = window_bucket(safe, keys)
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
