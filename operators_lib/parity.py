"""Compare the batch final with the stream final and explain the differences.

Rows are compared as multisets. Floating-point values are compared at 12 significant digits:
the two modes add the same numbers in a different order (Spark's window frames vs the stream
operator's running sums), so the last bits may differ while the results are the same.

``compare_frames`` is the comparison as a Spark job (the executors count each distinct row,
+1 per batch row, -1 per stream row; rows whose count is not 0 differ): only the counts and
a sample of the differing rows reach the driver. ``compare`` is the same on the driver, for
results already there (``twinflow run``'s outputs).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pandas as pd
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from operators_lib.changelog import canonical_nan
from operators_lib.output import formatter
from operators_lib.types import NESTED, FlinkType


@dataclass
class Diff:
    """Rows only in one result: how many, and (some of) them."""

    only_batch: list[tuple]
    only_stream: list[tuple]
    only_batch_count: int = -1  # -1: len(only_batch), all of them listed
    only_stream_count: int = -1

    def __post_init__(self) -> None:
        if self.only_batch_count < 0:
            self.only_batch_count = len(self.only_batch)
        if self.only_stream_count < 0:
            self.only_stream_count = len(self.only_stream)

    @property
    def equal(self) -> bool:
        return not self.only_batch_count and not self.only_stream_count

    def summary(self, limit: int = 10) -> dict:
        return {"only_in_batch": self.only_batch_count,
                "only_in_stream": self.only_stream_count,
                "sample_only_in_batch": [list(map(_show, r)) for r in self.only_batch[:limit]],
                "sample_only_in_stream": [list(map(_show, r)) for r in self.only_stream[:limit]]}


def _show(v):
    return None if v is None else str(v)


def _normalizer(t: FlinkType):
    if t.is_floating:
        return lambda v: canonical_nan(float(f"{float(v):.12g}"))
    if t.name == "TIME" or t.name in NESTED:  # compared as Flink prints them (stream.csv's text)
        show = formatter(t)
        return lambda v: v if isinstance(v, str) else show(v)
    if t.is_timestamp:
        return lambda v: pd.Timestamp(v).tz_localize(None) if pd.Timestamp(
            v).tzinfo is None else pd.Timestamp(v).tz_convert("UTC").tz_localize(None)
    if t.is_integral:
        return int
    return lambda v: v


def row_counter(df: pd.DataFrame, types: dict[str, FlinkType]) -> Counter:
    norms = [_normalizer(types[c]) for c in df.columns]
    nulls = df.isna().itertuples(index=False, name=None)
    rows = Counter()
    for r, null in zip(df.itertuples(index=False, name=None), nulls):
        rows[tuple(None if z else n(v) for v, z, n in zip(r, null, norms))] += 1
    return rows


def compare(batch: pd.DataFrame, stream: pd.DataFrame, types: dict[str, FlinkType]) -> Diff:
    b, s = row_counter(batch, types), row_counter(stream, types)
    return Diff(list((b - s).elements()), list((s - b).elements()))


_SIDE, _DIFF = "tw__side", "tw__diff"
SAMPLE = 10


def compare_frames(batch: DataFrame, stream: DataFrame, types: dict[str, FlinkType],
                   columns: list[str]) -> Diff:
    """``compare`` as a Spark job (module docstring)."""
    norm = [_comparable(c, types[c]) for c in columns]
    sides = batch.select(*norm, F.lit(1).alias(_SIDE)).unionByName(
        stream.select(*norm, F.lit(-1).alias(_SIDE)))
    diff = sides.groupBy(*columns).agg(F.sum(_SIDE).alias(_DIFF)).where(F.col(_DIFF) != 0)
    diff = diff.persist()
    try:
        counts = diff.agg(F.sum(F.when(F.col(_DIFF) > 0, F.col(_DIFF))).alias("b"),
                          F.sum(F.when(F.col(_DIFF) < 0, -F.col(_DIFF))).alias("s")).first()
        samples = [[tuple(r[c] for c in columns) for r in diff.where(which).limit(SAMPLE)
                    .collect()] for which in (F.col(_DIFF) > 0, F.col(_DIFF) < 0)]
    finally:
        diff.unpersist()
    return Diff(samples[0], samples[1], counts["b"] or 0, counts["s"] or 0)


def _comparable(name: str, t: FlinkType) -> Column:
    """A column both results hold the same way when their values are equal (as ``compare``
    normalizes them): floats at 12 significant digits (-0.0 as 0.0, NaN as NaN), values Spark
    cannot group (a MAP, or what holds one) as text."""
    c = F.col(name)
    if t.is_floating:
        return F.when(F.isnan(c), F.lit("NaN")).otherwise(
            F.format_string("%.12g", c.cast("double") + F.lit(0.0))).alias(name)
    if t.name == "TIME" or "MAP" in t.sql():  # a MAP in its keys' order, as ``compare``
        return c.cast("string").alias(name)
    return c
