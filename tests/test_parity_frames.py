"""Parity as a Spark job (parity.compare_frames) holds rows equal exactly when the driver's
comparison (parity.compare) does: floats at 12 significant digits, NaN equal to NaN, -0.0 to
0.0, NULL apart from every value, a MAP as printed, rows as a multiset."""

from __future__ import annotations

import math

import pandas as pd
from pyspark.sql import types as T

from operators_lib.parity import compare, compare_frames
from operators_lib.types import FlinkType

TYPES = {"x": FlinkType("DOUBLE"), "n": FlinkType("INT"), "s": FlinkType("STRING"),
         "m": FlinkType("MAP", args=(FlinkType("STRING"), FlinkType("INT")))}
SCHEMA = T.StructType([T.StructField("x", T.DoubleType()), T.StructField("n", T.IntegerType()),
                       T.StructField("s", T.StringType()),
                       T.StructField("m", T.MapType(T.StringType(), T.IntegerType()))])
BATCH = [(0.1 + 0.2, 1, "a", {"k": 1, "j": 2}), (math.nan, 2, None, None),
         (-0.0, 3, "c", {}), (1.0, 4, "d", None), (1.0, 4, "d", None)]


def _both(spark, batch, stream) -> tuple[dict, dict]:
    columns = list(TYPES)
    on_spark = compare_frames(spark.createDataFrame(batch, SCHEMA),
                              spark.createDataFrame(stream, SCHEMA), TYPES, columns)
    frames = [pd.DataFrame([(x, n, s, None if m is None else list(m.items()))
                            for x, n, s, m in rows], columns=columns) for rows in (batch, stream)]
    on_driver = compare(frames[0], frames[1], TYPES)
    counts = ("only_in_batch", "only_in_stream")
    return ({k: on_spark.summary()[k] for k in counts},
            {k: on_driver.summary()[k] for k in counts})


def test_equal_results_are_equal_on_both_sides(spark):
    stream = [(0.3, 1, "a", {"k": 1, "j": 2}), (math.nan, 2, None, None), (0.0, 3, "c", {}),
              (1.0, 4, "d", None), (1.0, 4, "d", None)]
    on_spark, on_driver = _both(spark, BATCH, stream)
    assert on_spark == on_driver == {"only_in_batch": 0, "only_in_stream": 0}


def test_differences_are_counted_as_the_driver_counts_them(spark):
    stream = [(0.3000001, 1, "a", {"k": 1, "j": 2}),  # another value
              (math.nan, 2, "", None),  # '' is not NULL
              (0.0, 3, "c", {"k": 0}),  # another map
              (1.0, 4, "d", None)]  # one of two copies
    on_spark, on_driver = _both(spark, BATCH, stream)
    assert on_spark == on_driver == {"only_in_batch": 4, "only_in_stream": 3}
