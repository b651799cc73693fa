"""Stream planner: the logical plan as a Structured Streaming query over staged micro-batch files.

Each table is a file source admitting one staged file (N rows) per micro-batch. The watermark
is Spark's (max event time seen in earlier micro-batches minus the WATERMARK delay), tracked on a
copy of the rowtime column so that Spark itself drops nothing: the operators decide lateness
with Flink's rules and report late rows instead of losing them silently.
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from operators_lib.plan import EMIT_TS, OP, ROWNUM, Node, Over, Scan
from operators_lib.relational import build
from operators_lib.scan import staged_schema, with_columns
from operators_lib.stream.over import TIME_MS, OverProcessor, OverSpec

_WM = "tw__wm"
_GLOBAL = "tw__global"


def stream_dataframe(spark: SparkSession, plan: Node, dirs: dict[str, Path]) -> DataFrame:
    """``dirs``: staged directory per table (lower-case name); adds tw__op/tw__ts/tw__rownum."""

    def scan(node: Scan) -> DataFrame:
        table = node.table
        df = (spark.readStream.schema(staged_schema(table))
              .option("maxFilesPerTrigger", 1).option("maxFileAge", "36500d")
              .parquet(str(dirs[table.name.lower()])))
        if table.watermark:
            wm = table.watermark
            df = (df.withColumn(_WM, F.col(wm.column))
                  .withWatermark(_WM, f"{wm.delay_ms} milliseconds").drop(_WM))
        return with_columns(df, table)

    df = build(plan, scan, over_stream)
    if OP not in df.columns:  # a stateless query: every row is an insert, in arrival order
        df = df.select("*", F.lit("+I").alias(OP), F.lit(0).cast("long").alias(EMIT_TS))
    return df


def over_stream(node: Over, df: DataFrame) -> DataFrame:
    # pandas hands the processor namedtuple-safe column names only ("_x", "from", "a b" would
    # arrive renamed): user columns cross the Python boundary as c0, c1, ... and come back.
    user = [c for c in df.columns if not c.startswith("tw__")]
    alias = {c: f"c{i}" for i, c in enumerate(user)}
    safe = df.select(*[F.col(f"`{c}`").alias(alias.get(c, c)) for c in df.columns])
    internal = {ROWNUM} | {a.arg for a in node.aggs if a.arg} | {
        p for p in node.partition_by if p.startswith("tw__p")}
    passthrough = tuple(alias[c] for c in user if c not in internal)
    spec = OverSpec(node.frame, alias.get(node.order_by, node.order_by), node.aggs, passthrough,
                    tuple(_pandas_dtype(a.type) for a in node.aggs),
                    proctime=node.time_kind == "proctime")
    schema = {f.name: f for f in safe.schema.fields}
    out = T.StructType(
        [schema[c] for c in passthrough]
        + [T.StructField(a.name, a.type.spark()) for a in node.aggs]
        + [T.StructField(OP, T.StringType()), T.StructField(EMIT_TS, T.LongType()),
           T.StructField(ROWNUM, T.LongType())])
    keyed = safe.select("*", F.unix_millis(F.col(spec.time_col)).alias(TIME_MS))
    if not node.partition_by:  # no PARTITION BY: one global partition, as in Flink
        keyed = keyed.withColumn(_GLOBAL, F.lit(0))
    keys = [alias.get(p, p) for p in node.partition_by] or [_GLOBAL]
    result = keyed.groupBy(*keys).transformWithStateInPandas(
        OverProcessor(spec), out, "Append", "None" if spec.proctime else "EventTime")
    original = {v: k for k, v in alias.items()}
    return result.select(*[F.col(c).alias(original.get(c, c)) for c in result.columns])


def _pandas_dtype(t) -> str:
    if t.is_integral:
        return "Int64"
    if t.is_floating:
        return "float64"
    return "object"
