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


class KeyRows:
    """One key's data rows of a micro-batch as Python lists, retractions first (pandas costs
    ~0.1 ms per operation: per key only ``tolist`` per column and one output frame)."""

    def __init__(self, df: pd.DataFrame, order: list[int], ops: list[str]):
        self.df, self.order = df, order
        self.adds = [ops[i] in ADDS for i in order]
        self._cols: dict[str, list] = {}

    def __len__(self) -> int:
        return len(self.order)

    def values(self, col: str) -> list:
        if col not in self._cols:
            self._cols[col] = self.df[col].tolist()
        return self._cols[col]

    def rows(self, cols: Iterable[str], kinds: Iterable[str],
             at: list[int] | None = None) -> list[tuple]:
        """Rows (all, or those at positions ``at`` of the input order) as tuples of Python
        values, NULL as None (NaN, NaT), integers as int (a nullable integer column reaches
        pandas as float64)."""
        order = self.order if at is None else [self.order[i] for i in at]
        columns = []
        for c, kind in zip(cols, kinds):
            raw = self.values(c)
            if kind == "int":
                columns.append([None if raw[i] != raw[i] or raw[i] is None else int(raw[i])
                                for i in order])
            else:
                columns.append([raw[i] if raw[i] == raw[i] else None for i in order])
        return list(zip(*columns)) if columns else [()] * len(order)


def read_input(frames: Iterable[pd.DataFrame]) -> tuple[KeyRows, pd.DataFrame | None]:
    """(data rows, marker rows); drops end-of-input markers."""
    frames = list(frames)
    df = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    rownum = df[ROWNUM].tolist()
    ops = df[OP].tolist() if OP in df.columns else [INSERT] * len(rownum)
    data = [i for i, (r, o) in enumerate(zip(rownum, ops)) if r >= 0 and o not in MARKERS]
    data.sort(key=lambda i: (ops[i] in ADDS, rownum[i]))
    markers = [i for i, o in enumerate(ops) if o in MARKERS]
    return KeyRows(df, data, ops), (df.iloc[markers] if markers else None)


def output(rows: list[tuple], ops: list[str], cols: list[str]) -> pd.DataFrame:
    # One object block: pandas builds it far faster than one array per column.
    block = np.empty((len(rows), len(cols) + 3), dtype=object)
    for i, (row, op) in enumerate(zip(rows, ops)):
        block[i, :len(cols)] = row
        block[i, len(cols)] = op
    block[:, len(cols) + 1:] = 0
    return pd.DataFrame(block, columns=[*cols, OP, EMIT_TS, ROWNUM])


def marker_output(late: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
    """Marker rows of upstream operators (late rows, expired state) travel on to the sink with
    NULL columns; expired state further up can no longer be tied to this operator's keys."""
    out = pd.DataFrame({c: pd.Series([None] * len(late), dtype=object) for c in cols})
    out[OP] = np.where(late[OP].to_numpy() == LATE, LATE, TTL_UPSTREAM)
    out[EMIT_TS] = np.zeros(len(late), dtype=np.int64)
    out[ROWNUM] = late[ROWNUM].to_numpy(dtype=np.int64)
    return out


def clock(data: KeyRows, ttl_ms: int | None) -> int | None:
    """The TTL clock of this micro-batch (None without TTL)."""
    return int(max(data.values(NOW))) if ttl_ms and NOW in data.df.columns and len(data) \
        else None


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
        if markers is not None:
            yield marker_output(markers, self.cols)
        if len(data):
            yield from self.process(key, data)

    def process(self, key: tuple, data: KeyRows) -> Iterator[pd.DataFrame]:
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
