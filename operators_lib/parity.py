"""Compare the batch final with the stream final and explain the differences.

Rows are compared as multisets. Floating-point values are compared at 12 significant digits:
the two modes add the same numbers in a different order (Spark's window frames vs the stream
operator's running sums), so the last bits may differ while the results are the same.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pandas as pd

from operators_lib.changelog import canonical_nan
from operators_lib.output import formatter
from operators_lib.types import NESTED, FlinkType


@dataclass
class Diff:
    only_batch: list[tuple]
    only_stream: list[tuple]

    @property
    def equal(self) -> bool:
        return not self.only_batch and not self.only_stream

    def summary(self, limit: int = 10) -> dict:
        return {"only_in_batch": len(self.only_batch), "only_in_stream": len(self.only_stream),
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
