"""Reading staged table files with the table's computed and processing-time columns added."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from operators_lib.catalog import TableDef
from operators_lib.plan import ROWNUM
from operators_lib.relational import carried


def staged_schema(table: TableDef) -> T.StructType:
    return T.StructType([T.StructField(c.name, c.type.spark()) for c in table.physical]
                        + [T.StructField(ROWNUM, T.LongType())])


def with_columns(df: DataFrame, table: TableDef) -> DataFrame:
    """All table columns in DDL order (computed ones evaluated by Spark), then ``tw__rownum``."""
    cols = []
    for c in table.columns:
        if c.proctime:
            # In a streaming query current_timestamp() is the micro-batch's processing time.
            cols.append(F.current_timestamp().alias(c.name))
        elif c.expr is not None:
            if c.spark_sql is None:
                raise ValueError(f"computed column {c.name} was not planned")
            cols.append(F.expr(c.spark_sql).alias(c.name))
        else:
            cols.append(F.col(c.name))
    return df.select(*cols, F.col(ROWNUM), *carried(df))
