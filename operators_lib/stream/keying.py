"""Keying a stream for its stateful processors: the never-NULL grouping columns, the state
slot and bucket of an operator key, and running a processor on the runtime (Arrow processors,
or transformWithStateInPandas with TIMESTAMP columns carried as text). Shared by the stream
planner's operator builders (planner.py, join_stream.py, rank_stream.py)."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from operators_lib.errors import VALUE_REFUSED
from operators_lib.plan import (
    EMIT_TS,
    END_FIRST,
    OP,
    ROWNUM,
    SWEEP_FIRST,
    quote,
)
from operators_lib.relational import carried
from operators_lib.stream.protocol import Processor
from operators_lib.stream.rows import BUCKET, BUCKETS, NOW, SLOT, SLOTS, key_names
from operators_lib.stream.runner import SparkRuntime

_TIME_TEXT = "yyyy-MM-dd HH:mm:ss.SSSSSS"  # a TIMESTAMP through a Python processor
_GLOBAL = "tw__global"
# What every processor emits after its own columns.
CHANGELOG_FIELDS = [T.StructField(OP, T.StringType()), T.StructField(EMIT_TS, T.LongType()),
                    T.StructField(ROWNUM, T.LongType())]


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
    result = runtime.apply(window_bucket(micros, keys), [BUCKET],
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


def window_bucket(df: DataFrame, keys) -> DataFrame:
    """``df`` with the bucket of a window operator's keys (one bucket without keys); an
    end-of-input marker of the last part goes to the bucket it names (plan.END_FIRST)."""
    bucket = F.when(F.col(ROWNUM) <= END_FIRST, F.lit(END_FIRST) - F.col(ROWNUM)).otherwise(
        F.pmod(F.xxhash64(*[F.col(k) for k in keys]), F.lit(BUCKETS))) if keys else F.lit(0)
    return df.withColumn(BUCKET, bucket.cast("long"))


def pandas_dtype(t) -> str:
    if t.is_integral:
        return "Int64"
    if t.is_floating:
        return "float64"
    return "object"


def key_default(dtype: T.DataType):
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
                  F.coalesce(col, key_default(df.schema[c].dataType)).alias(value)]
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


def changelog_columns(df: DataFrame, ttl_ms: int | None) -> tuple[list, list]:
    """(op, rownum [+ the TTL clock]) columns of an input: append-only inputs are all +I."""
    op = F.col(OP) if OP in df.columns else F.lit("+I")
    now = [F.unix_millis(F.current_timestamp()).alias(NOW)] if ttl_ms else []
    return [op.alias(OP)], [F.col(ROWNUM), *now]
