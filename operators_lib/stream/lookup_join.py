"""Lookup join: ``l [LEFT] JOIN t FOR SYSTEM_TIME AS OF l.proctime AS r ON l.k = r.k`` where
``t`` is a table with neither PRIMARY KEY nor WATERMARK (plan.Temporal.lookup): Flink's lookup
join (LookupJoinRunner), which it runs against lookup sources (JDBC, HBase, the legacy CSV source
of nexmark's q13).

Changelog rules (the left input is a table, filtered or projected: insert-only):
- A left row joins, when it arrives, every row of ``t`` whose keys equal its keys and for which
  the residual condition is TRUE: one ``+I`` per match; LEFT: one ``+I`` padded with NULLs where
  there is none. NULL keys match nothing.
- ``t`` is its input as offered when the run began (all of it in a bounded run; in a scheduled
  run, everything staged up to this run's interval), read whole in every micro-batch, as a
  lookup source is queried when a row arrives: it is not streamed, keeps no state and has no
  watermark. It does not change during a run, so stream equals batch (a regular join there).

Runtime: Spark's stream-static join; no Python processor, no state.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from operators_lib.catalog import TableDef
from operators_lib.io import offers
from operators_lib.plan import BATCH, EMIT_TS, ROWNUM, Join, quote
from operators_lib.relational import carried, spark_join
from operators_lib.scan import staged_schema


def static_table(spark: SparkSession, table: TableDef, source: Path) -> DataFrame:
    """The rows offered to ``table``'s source (io/offers.py), as one static frame."""
    files = [str(f) for f in offers.offered(source) if f.name != offers.EOF_FILE]
    schema = staged_schema(table)
    df = spark.read.schema(schema).parquet(*files) if files else \
        spark.createDataFrame([], schema)
    return df.where(F.col(ROWNUM) >= 0)  # markers of the end of input and of sweeps


def lookup_join_stream(node: Join, left: DataFrame, right: DataFrame) -> DataFrame:
    """Rows join; markers (end of input, sweeps: ``tw__rownum < 0``) pass on unjoined."""
    if BATCH in left.columns:  # the harness: a match belongs to its left row's micro-batch
        right = right.withColumn(BATCH, F.lit(-1).cast(left.schema[BATCH].dataType))
    rows = left.where(F.col(ROWNUM) >= 0)
    joined = spark_join(replace(node, temporal=None), rows, right)
    markers = left.where(F.col(ROWNUM) < 0).select(
        *[F.col(quote(f.name)) for f in node.left.fields],
        *[F.lit(None).cast(f.type.spark()).alias(f.name) for f in node.right.fields],
        F.col(ROWNUM), F.lit(0).cast("long").alias(EMIT_TS), *carried(left))
    return joined.unionByName(markers)
