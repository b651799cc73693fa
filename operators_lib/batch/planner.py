"""Batch planner: the logical plan over the bounded input as Spark SQL operators.

OVER is Spark window functions: ``ROWS`` orders peers (rows with equal time) by arrival
(``tw__rownum``), as Flink's streaming operator does; ``RANGE`` treats peers as one window.
Joins are Spark joins (the residual condition built from the same ``Cond`` the stream operator
evaluates); GROUP BY is Spark's aggregation. Aggregates are cast to Flink's result types (SUM
keeps the input type and wraps on overflow, AVG of an integer divides that sum and truncates
toward zero). FIRST_VALUE, LAST_VALUE, LISTAGG and Welford's M2 (of STDDEV_* / VAR_*, planned
in sql/aggregate.py) read a group's non-NULL values in arrival order, as the stream does: M2
replays Flink's accumulate steps over them in DOUBLE.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from decimal import Decimal
from functools import partial
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession, Window, WindowSpec
from pyspark.sql import functions as F

from operators_lib.plan import (
    EMIT_TS,
    ROWNUM,
    AggCall,
    Aggregate,
    Join,
    Node,
    Over,
    Rank,
    Scan,
    SessionRows,
    WindowAggregate,
    quote,
)
from operators_lib.relational import (
    WEND,
    WSTART,
    build,
    cond_column,
    spark_join,
    with_ttl_key,
    with_windows,
)
from operators_lib.scan import staged_schema, with_columns


def batch_dataframe(spark: SparkSession, plan: Node, files: dict[str, Iterable[Path]],
                    drop_rows: dict[str, DataFrame] | None = None,
                    drop_windows: DataFrame | None = None,
                    keep_keys: dict[str, DataFrame] | None = None) -> DataFrame:
    """``files``: staged data files per table (lower-case name); ``drop_rows``: input rows to
    leave out per table (their ``ROWNUM``: the rows a stream run found late); ``drop_windows``:
    (``ROWNUM``, ``WEND``) pairs a window aggregate leaves out (windows that had fired when the
    row arrived). Both are left out by anti-joins on the executors. ``keep_keys``: per table,
    the key values (a DataFrame of input columns) whose rows alone are read (NULL matches
    NULL: a semi-join)."""

    def scan(node: Scan) -> DataFrame:
        name = node.table.name.lower()
        paths = [str(p) for p in files[name]]
        schema = staged_schema(node.table)
        # The last part may also announce the end of input to the stream (plan.END_FIRST).
        df = spark.read.schema(schema).parquet(*paths).where(F.col(ROWNUM) >= 0) if paths \
            else spark.createDataFrame([], schema)
        drop = (drop_rows or {}).get(name)
        if drop is not None:
            df = df.join(drop.select(ROWNUM).distinct(), ROWNUM, "left_anti")
        keys = (keep_keys or {}).get(name)
        if keys is not None:
            # Renamed apart: the key values may come from a read of the same files.
            named = keys.distinct().toDF(*[f"tw__key{i}" for i in range(len(keys.columns))])
            df = df.join(named, [df[c].eqNullSafe(named[f"tw__key{i}"])
                                 for i, c in enumerate(keys.columns)], "left_semi")
        return with_columns(df, node.table)

    return build(plan, scan, {Over: over_batch, Join: join_batch, Aggregate: aggregate_batch,
                              Rank: rank_batch,
                              WindowAggregate: partial(window_batch, drop=drop_windows),
                              SessionRows: session_rows_batch})


def join_batch(node: Join, left: DataFrame, right: DataFrame) -> DataFrame:
    if node.temporal is None or node.temporal.lookup:
        return spark_join(replace(node, temporal=None), left, right)
    if node.temporal.time_kind == "rowtime":
        return temporal_batch(node, left, right)
    # Processing time: each left row joins its key's latest version of the whole input.
    tp, keys = node.temporal, [F.col(quote(k)) for k in node.right_keys]
    order = ([F.col(quote(tp.right_time)).desc()] if tp.dedup else []) + [F.col(ROWNUM).desc()]
    latest = right.withColumn("tw__n", F.row_number().over(
        Window.partitionBy(*keys).orderBy(*order))).where("tw__n = 1").drop("tw__n")
    return spark_join(replace(node, temporal=None), left, latest, null_keys_match=True)


_T, _VER, _PROBE, _SIDE, _HIT = "tw__t", "tw__ver", "tw__probe", "tw__side", "tw__hit"


def temporal_batch(node: Join, left: DataFrame, right: DataFrame) -> DataFrame:
    """A temporal join over the bounded input as an as-of join: both sides in one frame per
    key, ordered by time (a version before a left row of the same time, versions of one time
    by arrival), and each left row takes the last version seen (``last(.., ignorenulls)``):
    one sort instead of a join against every older version. A key with NULLs joins the
    versions of the same key, NULLs included, as Flink's keyed operator does (a window
    partition holds them together)."""
    tp = node.temporal
    lnames = [f.name for f in node.left.fields]
    rnames = [f.name for f in node.right.fields]
    keys = [f"tw__tk{i}" for i in range(len(node.left_keys))]

    def side(df: DataFrame, on: tuple[str, ...], time: str, tag: int, names: list[str]):
        return df.select(*[F.col(quote(k)).alias(n) for k, n in zip(on, keys)],
                         F.unix_millis(F.col(quote(time))).alias(_T), F.lit(tag).alias(_SIDE),
                         F.col(ROWNUM), F.struct(*[F.col(quote(n)) for n in names]))

    versions = side(right, node.right_keys, tp.right_time, 0, rnames).toDF(
        *keys, _T, _SIDE, ROWNUM, _VER)
    if tp.dedup:  # a row older than its key's latest so far is no version
        before = Window.partitionBy(*keys).orderBy(ROWNUM).rowsBetween(
            Window.unboundedPreceding, -1)
        versions = versions.withColumn("tw__latest", F.max(_T).over(before))
        versions = versions.where("tw__latest IS NULL OR tw__t >= tw__latest").drop("tw__latest")
    probes = side(left, node.left_keys, tp.left_time, 1, lnames).toDF(
        *keys, _T, _SIDE, ROWNUM, _PROBE)
    both = versions.withColumn(_PROBE, F.lit(None).cast(probes.schema[_PROBE].dataType)) \
        .unionByName(probes.withColumn(_VER, F.lit(None).cast(versions.schema[_VER].dataType)))
    seen = Window.partitionBy(*keys).orderBy(_T, _SIDE, ROWNUM).rowsBetween(
        Window.unboundedPreceding, Window.currentRow)
    joined = both.select(F.last(_VER, ignorenulls=True).over(seen).alias(_VER), _SIDE, _PROBE)
    joined = joined.where(F.col(_SIDE) == 1).select(
        *[F.col(f"{_PROBE}.{quote(n)}").alias(n) for n in lnames],
        *[F.col(f"{_VER}.{quote(n)}").alias(n) for n in rnames],
        F.col(_VER).isNotNull().alias(_HIT))
    if node.residual is not None:
        passes = F.col(_HIT) & F.coalesce(cond_column(node.residual, joined, joined),
                                          F.lit(False))
        joined = joined.select(*[F.col(quote(n)) for n in lnames],
                               *[F.when(passes, F.col(quote(n))).alias(n) for n in rnames],
                               passes.alias(_HIT))
    if node.kind == "INNER":
        joined = joined.where(F.col(_HIT))
    return joined.select(*[F.col(quote(n)) for n in lnames + rnames],
                         F.lit(0).cast("long").alias(ROWNUM),
                         F.lit(0).cast("long").alias(EMIT_TS))


def over_batch(node: Over, df: DataFrame) -> DataFrame:
    w = Window.partitionBy(*[F.col(p) for p in node.partition_by])
    time = F.col(node.order_by)
    start = Window.unboundedPreceding if node.frame.preceding is None else -node.frame.preceding
    if node.time_kind == "proctime":
        time = F.col(ROWNUM)  # batch has no processing time: arrival order stands in for it
    timestamp = node.time_kind != "proctime" and next(
        f.type.is_timestamp for f in node.child.fields if f.name == node.order_by)
    if node.frame.kind == "ROWS":
        w = w.orderBy(time, F.col(ROWNUM)).rowsBetween(start, Window.currentRow)
    else:
        # INTERVAL frames count milliseconds; a numeric ORDER BY's frame counts its units.
        w = w.orderBy(F.unix_millis(time) if timestamp else time)
        w = w.rangeBetween(start, Window.currentRow)
    # FIRST_VALUE / LAST_VALUE: by the window's order (time, then arrival), not arrival alone
    order = F.struct(F.unix_millis(time) if timestamp else time, F.col(ROWNUM))
    aggs = [agg_column(a, w, order).alias(a.name) for a in node.aggs]
    emit = F.unix_millis(F.col(node.order_by)) if node.time_kind == "rowtime" else F.lit(0)
    return df.select("*", *aggs, emit.cast("long").alias(EMIT_TS))


def rank_batch(node: Rank, df: DataFrame) -> DataFrame:
    """The ranking function over the partition, ties in arrival order (as the stream ranks
    them; dedup keep-last: the later row first), then kept to the ranks start..end."""
    arrival = F.col(ROWNUM).desc() if node.dedup == "last" else F.col(ROWNUM).asc()
    order = [] if node.dedup and node.time_kind == "proctime" else [
        getattr(F.col(quote(k.col)), ("desc" if k.desc else "asc") + "_nulls_"
                + ("first" if k.nulls_first else "last"))() for k in node.order_by]
    w = Window.partitionBy(*[F.col(quote(p)) for p in node.partition_by])
    func = {"ROW_NUMBER": F.row_number, "RANK": F.rank, "DENSE_RANK": F.dense_rank}[node.func]
    # RANK / DENSE_RANK: arrival must not split peers, so only ROW_NUMBER orders by it.
    rank = func().over(w.orderBy(*order, arrival) if node.func == "ROW_NUMBER" else
                       w.orderBy(*order))
    ranked = df.select("*", rank.alias(node.rank_field))
    kept = ranked.where(F.col(node.rank_field).between(node.start, node.end))
    if not node.rank_output:
        kept = kept.withColumn(node.rank_field, F.lit(None).cast("long"))
    return kept.select(*[F.col(quote(f.name)) for f in node.fields], ROWNUM,
                       F.lit(0).cast("long").alias(EMIT_TS))


def aggregate_batch(node: Aggregate, df: DataFrame) -> DataFrame:
    aggs = [agg_column(a).alias(a.name) for a in node.aggs]
    # A group's row "arrives" with the last input row that changed it, as in stream mode (a
    # TopN ranks ties by arrival); without a TopN above, its last input row.
    arrival = F.max(ROWNUM)
    if node.ranked:
        df = _with_changes(node, df)
        arrival = F.max(F.when(F.col(_CHANGED), F.col(ROWNUM)))
    out = df.groupBy(*[F.col(quote(g)) for g in node.group_by]).agg(
        *aggs, arrival.alias(ROWNUM))
    out = out.select(*[F.col(quote(f.name)) for f in node.fields],
                     F.coalesce(F.col(ROWNUM), F.lit(0)).cast("long").alias(ROWNUM),
                     F.lit(0).cast("long").alias(EMIT_TS))
    return with_ttl_key(node, out)


_CHANGED = "tw__changed"
_T, _SESSION = "tw__t", "tw__session"


def _with_changes(node: Aggregate, df: DataFrame) -> DataFrame:
    """Each input row flagged with whether it changed its group's result row: the running
    aggregates in arrival order differ from those before it (the first row creates the row)."""
    groups = [F.col(quote(g)) for g in node.group_by]
    w = Window.partitionBy(*groups).orderBy(ROWNUM).rowsBetween(Window.unboundedPreceding,
                                                                  Window.currentRow)
    running = [_running(a, w).alias(f"tw__run{i}") for i, a in enumerate(node.aggs)]
    df = df.select("*", *running)
    before = Window.partitionBy(*groups).orderBy(ROWNUM)
    changed = F.lag(F.lit(1)).over(before).isNull()  # the group's first row
    for i in range(len(node.aggs)):
        c = F.col(f"tw__run{i}")
        changed = changed | ~c.eqNullSafe(F.lag(c).over(before))
    return df.withColumn(_CHANGED, changed)


def _running(a: AggCall, w: WindowSpec) -> Column:
    """``a`` over the window ``w`` (Spark has no DISTINCT window aggregates: those run over
    the set of distinct values so far)."""
    if not a.distinct or a.func in ("MIN", "MAX", *_ORDERED):
        return agg_column(replace(a, distinct=False), w)
    values = F.collect_set(F.col(a.arg)).over(w)
    if a.func == "COUNT":
        return F.size(values)
    t = a.type.spark()  # OVER adds in the argument's type: SUM and AVG wrap (agg_column)
    total = F.aggregate(values, F.lit(0).cast(t), lambda acc, x: (acc + x).cast(t))
    value = total if a.func == "SUM" else (total / F.size(values)).cast(t)  # truncates, rounds
    return F.when(F.size(values) > 0, value)  # no value yet: NULL


def agg_column(a: AggCall, w: WindowSpec | None = None, order: Column | None = None
               ) -> Column:
    """The aggregate (over ``w``, or per group) with Flink's NULL rules and result type (see
    module docstring); DISTINCT aggregates count each distinct non-NULL value once.
    ``order``: the rows' order for FIRST_VALUE / LAST_VALUE (default: arrival)."""
    def over(c: Column) -> Column:
        return c.over(w) if w is not None else c

    x = F.col(a.arg) if a.arg else None
    if a.func in _ORDERED:
        return _ordered_column(a, x, over, F.col(ROWNUM) if order is None else order)
    if a.func == "COUNT":
        if x is None:
            return over(F.count(F.lit(1)))
        return over(F.count_distinct(x) if a.distinct else F.count(x))
    if a.func in ("MIN", "MAX"):
        return over((F.min if a.func == "MIN" else F.max)(x))
    t = a.type
    count = over(F.count_distinct(x) if a.distinct else F.count(x))
    if not t.is_integral:
        total = over(F.sum_distinct(x) if a.distinct else F.sum(x))
        if a.func == "SUM":
            return total.cast(t.spark())
        return (over(F.avg(x)) if not a.distinct else total / count).cast(t.spark())
    # Integers add exactly, then wrap as Flink's adding does: SUM in the argument's type, so
    # does AVG over an OVER window; a GROUP BY's or a window aggregate's AVG adds in BIGINT
    # (measured, Flink 2.3). Spark's own sum of BIGINTs would fail on an overflow: those add
    # as DECIMAL (smaller integers add exactly in Spark's BIGINT sum).
    exact = x.cast("decimal(38, 0)") if t.integral_bits() == 64 else x
    value = over(F.sum_distinct(exact) if a.distinct else F.sum(exact))
    bits = t.integral_bits() if a.func == "SUM" or w is not None else 64
    lim, full = (F.lit(Decimal(2 ** (bits - 1))), F.lit(Decimal(2 ** bits))) if bits == 64 else (
        F.lit(2 ** (bits - 1)), F.lit(2 ** bits))
    value = F.pmod(value + lim, full) - lim
    if a.func == "AVG":  # Java integer division truncates toward zero
        value = (value / count).cast("long")
    return value.cast(t.spark())


_ORDERED = ("FIRST_VALUE", "LAST_VALUE", "LISTAGG", "M2")


def _ordered_column(a: AggCall, x: Column, over, order: Column) -> Column:
    """FIRST_VALUE / LAST_VALUE / LISTAGG / M2: of the non-NULL values in arrival order
    (``ROWNUM``), as Flink's stream accumulates them (stream/group_agg.py); FIRST_VALUE and
    LAST_VALUE by ``order``."""
    if a.func in ("FIRST_VALUE", "LAST_VALUE"):
        pick = F.min_by if a.func == "FIRST_VALUE" else F.max_by
        return over(pick(x, F.when(x.isNotNull(), order)))
    value = x
    if a.func == "M2":  # Flink's doubleValue(); a DECIMAL through its text: correctly rounded
        value = (x.cast("string") if a.arg_type.name == "DECIMAL" else x).cast("double")
    values = F.array_sort(over(F.collect_list(F.when(x.isNotNull(), F.struct(
        F.col(ROWNUM).alias("r"), value.alias("v"))))))
    if a.func == "LISTAGG":
        joined = F.array_join(F.transform(values, lambda e: e["v"]),
                              "," if a.separator is None else a.separator)
        return F.when(F.size(values) > 0, joined)

    def welford(acc: Column, e: Column) -> Column:
        # WelfordM2AggFunction.accumulate, operation for operation
        n = acc["n"] + 1
        delta = e["v"] - acc["mean"]
        mean = acc["mean"] + delta / n
        return F.struct(n.alias("n"), mean.alias("mean"),
                        (acc["m2"] + delta * (e["v"] - mean)).alias("m2"))

    start = F.struct(F.lit(0).cast("long").alias("n"), F.lit(0.0).alias("mean"),
                     F.lit(0.0).alias("m2"))
    acc = F.aggregate(values, start, welford)
    return F.when((acc["n"] > 0) & (acc["m2"] >= 0), acc["m2"])  # getValue: NULL if m2 < 0


def window_batch(node: WindowAggregate, df: DataFrame, drop: DataFrame | None) -> DataFrame:
    """Each row in each of its windows (relational.with_windows; SESSION: its session) but
    the ``drop`` pairs, then the aggregates per key and window; a window's row arrives with
    its first input row."""
    t = F.unix_millis(F.col(quote(node.time_col)))
    keys = [F.col(quote(g)) for g in node.group_by]
    if node.window.kind == "SESSION":
        df = _sessions(df, keys, t, node.window.size_ms)
    elif node.window.kind == "GIVEN":
        df = df.select("*", *[F.unix_millis(F.col(quote(b))).alias(c)
                              for b, c in zip(node.bounds, (WSTART, WEND))])
    else:
        df = with_windows(node.window, df, t)
    if drop is not None and node.source is not None:  # pairs of the window that read the table
        df = df.join(drop.select(ROWNUM, WEND), [ROWNUM, WEND], "left_anti")
    out = df.groupBy(*keys, F.col(WSTART), F.col(WEND)).agg(
        *[agg_column(a).alias(a.name) for a in node.aggs], F.min(ROWNUM).alias(ROWNUM))
    start, end, wtime = node.bounds
    bounds = {start: F.timestamp_millis(F.col(WSTART)), end: F.timestamp_millis(F.col(WEND)),
              wtime: F.timestamp_millis(F.col(WEND) - 1)}
    return out.select(*[bounds[f.name].alias(f.name) if f.name in bounds else
                        F.col(quote(f.name)) for f in node.fields], F.col(ROWNUM),
                      (F.col(WEND) - 1).alias(EMIT_TS))


def session_rows_batch(node: SessionRows, df: DataFrame) -> DataFrame:
    """Each row with its session's bounds; emitted (stream) when its session ends."""
    out = _sessions(df, [F.col(quote(k)) for k in node.partition],
                    F.unix_millis(F.col(quote(node.time_col))), node.window.size_ms)
    start, end, wtime = (f.name for f in node.fields[-3:])
    return out.select(*[F.col(quote(f.name)) for f in node.fields[:-3]],
                      F.timestamp_millis(F.col(WSTART)).alias(start),
                      F.timestamp_millis(F.col(WEND)).alias(end),
                      F.timestamp_millis(F.col(WEND) - 1).alias(wtime), F.col(ROWNUM),
                      (F.col(WEND) - 1).alias(EMIT_TS))


def _sessions(df: DataFrame, keys: list[Column], t: Column, gap: int) -> DataFrame:
    """Each row with its SESSION window (start, end) in epoch milliseconds: the rows of a key
    in time order, a new session wherever the previous row is more than ``gap`` earlier."""
    by_time = Window.partitionBy(*keys).orderBy(t, F.col(ROWNUM))
    cut = F.coalesce(t - F.lag(t).over(by_time) > gap, F.lit(True))
    df = df.select("*", t.alias(_T), F.sum(cut.cast("long")).over(
        by_time.rowsBetween(Window.unboundedPreceding, 0)).alias(_SESSION))
    session = Window.partitionBy(*keys, F.col(_SESSION))
    return df.select("*", F.min(_T).over(session).alias(WSTART),
                     (F.max(_T).over(session) + gap).alias(WEND)).drop(_T, _SESSION)
