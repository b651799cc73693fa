"""Parity as a Spark job (parity.compare_frames): floats equal at 12 significant digits, NaN
equal to NaN, -0.0 to 0.0, NULL apart from every value (also from ''), a MAP as printed, rows
as a multiset; both results' rows counted by the same job."""

from __future__ import annotations

import math

from pyspark.sql import types as T

from operators_lib.parity.compare import compare_frames
from operators_lib.types import FlinkType

TYPES = {"x": FlinkType("DOUBLE"), "n": FlinkType("INT"), "s": FlinkType("STRING"),
         "m": FlinkType("MAP", args=(FlinkType("STRING"), FlinkType("INT")))}
SCHEMA = T.StructType([T.StructField("x", T.DoubleType()), T.StructField("n", T.IntegerType()),
                       T.StructField("s", T.StringType()),
                       T.StructField("m", T.MapType(T.StringType(), T.IntegerType()))])
BATCH = [(0.1 + 0.2, 1, "a", {"k": 1, "j": 2}), (math.nan, 2, None, None),
         (-0.0, 3, "c", {}), (1.0, 4, "d", None), (1.0, 4, "d", None)]


def _compare(spark, batch, stream):
    return compare_frames(spark.createDataFrame(batch, SCHEMA),
                          spark.createDataFrame(stream, SCHEMA), TYPES, list(TYPES))


def test_equal_results_are_equal(spark):
    stream = [(0.3, 1, "a", {"k": 1, "j": 2}), (math.nan, 2, None, None), (0.0, 3, "c", {}),
              (1.0, 4, "d", None), (1.0, 4, "d", None)]
    diff = _compare(spark, BATCH, stream)
    assert diff.equal
    assert (diff.batch_rows, diff.stream_rows) == (5, 5)
    assert diff.summary().sample_only_in_batch == []


def test_differences_are_counted_row_by_row(spark):
    stream = [(0.3000001, 1, "a", {"k": 1, "j": 2}),  # another value
              (math.nan, 2, "", None),  # '' is not NULL
              (0.0, 3, "c", {"k": 0}),  # another map
              (1.0, 4, "d", None)]  # one of two copies
    diff = _compare(spark, BATCH, stream)
    summary = diff.summary()
    assert (summary.only_in_batch, summary.only_in_stream) == (4, 3)
    assert (diff.batch_rows, diff.stream_rows) == (5, 4)
    # A row that lost one of its two copies is sampled once, the others as they are.
    assert sorted(r[2] for r in summary.sample_only_in_stream) == ["", "a", "c"]
    assert len(summary.sample_only_in_batch) == 4
