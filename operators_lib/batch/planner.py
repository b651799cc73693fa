"""Batch planner: the logical plan over the bounded input as Spark window functions.

OVER ``ROWS`` orders peers (rows with equal time) by arrival (``tw__rownum``), as Flink's streaming
operator does; ``RANGE`` treats peers as one window. Results are cast to Flink's result types
(SUM keeps the input type and wraps on overflow, AVG of an integer divides that sum and
truncates toward zero).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession, Window, WindowSpec
from pyspark.sql import functions as F

from operators_lib.plan import EMIT_TS, ROWNUM, AggCall, Node, Over, Scan
from operators_lib.relational import build
from operators_lib.scan import staged_schema, with_columns


def batch_dataframe(spark: SparkSession, plan: Node, files: dict[str, Iterable[Path]],
                    drop_rows: dict[str, Collection[int]] | None = None) -> DataFrame:
    """``files``: staged data files per table (lower-case name); ``drop_rows``: input row
    numbers to leave out per table (the rows a stream run found late)."""

    def scan(node: Scan) -> DataFrame:
        name = node.table.name.lower()
        paths = [str(p) for p in files[name]]
        schema = staged_schema(node.table)
        df = spark.read.schema(schema).parquet(*paths) if paths else spark.createDataFrame(
            [], schema)
        drop = (drop_rows or {}).get(name)
        if drop:
            df = df.where(~F.col(ROWNUM).isin([int(r) for r in drop]))
        return with_columns(df, node.table)

    return build(plan, scan, over_batch)


def over_batch(node: Over, df: DataFrame) -> DataFrame:
    w = Window.partitionBy(*[F.col(p) for p in node.partition_by])
    time = F.col(node.order_by)
    start = Window.unboundedPreceding if node.frame.preceding is None else -node.frame.preceding
    if node.time_kind == "proctime":
        time = F.col(ROWNUM)  # batch has no processing time: arrival order stands in for it
    if node.frame.kind == "ROWS":
        w = w.orderBy(time, F.col(ROWNUM)).rowsBetween(start, Window.currentRow)
    else:
        w = w.orderBy(F.unix_millis(time) if node.time_kind == "rowtime" else time)
        w = w.rangeBetween(start, Window.currentRow)
    aggs = [agg_column(a, w).alias(a.name) for a in node.aggs]
    emit = F.unix_millis(F.col(node.order_by)) if node.time_kind == "rowtime" else F.lit(0)
    return df.select("*", *aggs, emit.cast("long").alias(EMIT_TS))


def agg_column(a: AggCall, w: WindowSpec) -> Column:
    """The aggregate over ``w`` with Flink's NULL rules and result type (see module docstring)."""
    x = F.col(a.arg) if a.arg else None
    if a.func == "COUNT":
        return (F.count(F.lit(1)) if x is None else F.count(x)).over(w)
    if a.func in ("MIN", "MAX"):
        return (F.min if a.func == "MIN" else F.max)(x).over(w)
    t = a.type
    if not t.is_integral:
        return (F.sum(x) if a.func == "SUM" else F.avg(x)).over(w).cast(t.spark())
    value = F.sum(x).over(w)
    if t.integral_bits() < 64:
        lim = 2 ** (t.integral_bits() - 1)  # Flink sums in the argument's type: it wraps
        value = F.pmod(value + F.lit(lim), F.lit(2 * lim)) - F.lit(lim)
    if a.func == "AVG":  # Java integer division truncates toward zero
        value = (value / F.count(x).over(w)).cast("long")
    return value.cast(t.spark())
