"""What the changelog processors (join, group aggregation) share: rows as hashable tuples of
Python values (NULL = None), input order, output frames, and one pickled state value per key.

Input order within a key and micro-batch: retractions first, then additions, each in arrival
order. Every retraction refers to a row emitted in an *earlier* micro-batch (upstream operators
emit net changes per micro-batch), so this order is always valid, and the result of a
micro-batch does not depend on how Spark's shuffle interleaved the rows.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Iterator

import numpy as np
import pandas as pd
from pyspark.sql import types as T
from pyspark.sql.streaming import StatefulProcessor

from operators_lib.changelog import ADDS, DELETE, INSERT
from operators_lib.plan import EMIT_TS, MARKERS, OP, ROWNUM
from operators_lib.types import FlinkType

LATE, TTL, TTL_UPSTREAM = MARKERS
NOW = "tw__now"  # the micro-batch's processing time (epoch ms): the state TTL clock
_STATE_SCHEMA = T.StructType([T.StructField("blob", T.BinaryType())])


def value_kind(t: FlinkType) -> str:
    if t.is_integral:
        return "int"
    if t.is_floating:
        return "float"
    return "other"


def read_input(frames: Iterable[pd.DataFrame]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(data rows ordered retractions first, marker rows); drops end-of-input markers."""
    frames = list(frames)
    df = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    df = df[df[ROWNUM].to_numpy() >= 0]
    ops = df[OP].to_numpy() if OP in df.columns else np.full(len(df), INSERT, dtype=object)
    late = np.isin(ops, MARKERS)
    adds = np.isin(ops, ADDS)
    data = df[~late].assign(**{OP: ops[~late]})
    order = np.lexsort((data[ROWNUM].to_numpy(), adds[~late]))
    return data.iloc[order], df[late]


def rows_of(df: pd.DataFrame, cols: Iterable[str], kinds: Iterable[str]) -> list[tuple]:
    """Rows of ``df[cols]`` as tuples of Python values, NULL as None, integers as int (a
    nullable integer column reaches pandas as float64)."""
    arrays = []
    for c, kind in zip(cols, kinds):
        s = df[c]
        a = s.to_numpy(dtype=object, na_value=None)
        if kind == "int" and s.dtype.kind == "f":
            a = np.array([None if v is None else int(v) for v in a], dtype=object)
        arrays.append(a)
    if not arrays:
        return [()] * len(df)
    return list(zip(*arrays))


def output(rows: list[tuple], ops: list[str], cols: list[str]) -> pd.DataFrame:
    out = pd.DataFrame.from_records(rows, columns=cols) if rows else pd.DataFrame(
        {c: pd.Series([], dtype=object) for c in cols})
    out[OP] = np.array(ops, dtype=object)
    out[EMIT_TS] = np.zeros(len(rows), dtype=np.int64)
    out[ROWNUM] = np.zeros(len(rows), dtype=np.int64)
    return out


def marker_output(late: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
    """Marker rows of upstream operators (late rows, expired state) travel on to the sink with
    NULL columns; expired state further up can no longer be tied to this operator's keys."""
    out = pd.DataFrame({c: pd.Series([None] * len(late), dtype=object) for c in cols})
    out[OP] = np.where(late[OP].to_numpy() == LATE, LATE, TTL_UPSTREAM)
    out[EMIT_TS] = np.zeros(len(late), dtype=np.int64)
    out[ROWNUM] = late[ROWNUM].to_numpy(dtype=np.int64)
    return out


def clock(data: pd.DataFrame, ttl_ms: int | None) -> int | None:
    """The TTL clock of this micro-batch (None without TTL)."""
    return int(data[NOW].max()) if ttl_ms and NOW in data.columns and len(data) else None


def net_changes(delta: dict[tuple, int]) -> tuple[list[tuple], list[str]]:
    """A multiset change as a changelog: retractions (-D) first, then additions (+I)."""
    minus = [r for r, n in delta.items() for _ in range(-n)]
    plus = [r for r, n in delta.items() for _ in range(n)]
    return minus + plus, [DELETE] * len(minus) + [INSERT] * len(plus)


class ChangelogProcessor(StatefulProcessor):
    """Base of the changelog operators: marker rows pass through to the sink, the key's data
    rows (retractions first) go to ``process``."""

    cols: list[str]  # output columns

    def handleInputRows(self, key, rows, timerValues) -> Iterator[pd.DataFrame]:
        data, markers = read_input(rows)
        if len(markers):
            yield marker_output(markers, self.cols)
        if len(data):
            yield from self.process(key, data)

    def process(self, key: tuple, data: pd.DataFrame) -> Iterator[pd.DataFrame]:
        raise NotImplementedError

    def close(self) -> None:
        pass


class BlobState:
    """One pickled Python value per key in a ValueState: read and written once per key and
    micro-batch (every state call is a round trip to the JVM)."""

    def __init__(self, handle, name: str):
        self.state = handle.getValueState(name, _STATE_SCHEMA)

    def get(self, default=None):
        value = self.state.get()
        return default if value is None else pickle.loads(value[0])

    def put(self, value) -> None:
        self.state.update((pickle.dumps(value, protocol=5),))

    def clear(self) -> None:
        self.state.clear()


def is_null(v) -> bool:
    return v is None or (isinstance(v, float) and v != v)
