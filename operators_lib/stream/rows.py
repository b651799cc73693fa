"""What the changelog processors (group aggregation, TopN) share: rows as hashable tuples of
Python values (NULL = None), input order, output frames, and keyed state. The regular join
(stream/join.py, a page per bucket, vectorized) shares the marker and sweep rows, the TTL
clock's column and the key codes.

Keys, slots and buckets: transformWithState calls Python once per grouping key, and that call
costs ~0.3 ms of Spark's own machinery (measured: 1M rows over 100,000 keys take 30 s with a
processor that does nothing), and every state call is a round trip to the JVM (~0.1-0.3 ms).
So an operator key hashes to a *slot* (``pmod(xxhash64(key), SLOTS)``), a slot to a *bucket*
(``slot % BUCKETS``); Spark groups by bucket, Python splits a bucket's rows by slot and key, and
the state of all keys of a slot is one value (a page), read and written once per slot and
micro-batch. A micro-batch thus costs at most BUCKETS calls and 2 x SLOTS state calls per
operator, however many keys it touches; a key's update rewrites its slot's page (state size /
SLOTS). A page is a row per key (stream/state_view.py): the key's columns, then its value's,
as the processor writes them (``value_columns``). SLOTS and the page's version are part of
the checkpoint's state layout (stream/layout.py).

A state sweep (``twinflow state compact``, compaction.py) reaches every bucket of every
changelog operator as one row (plan.SWEEP_FIRST): an operator with a state TTL (join, GROUP
BY) drops the keys idle longer than the TTL from all the bucket's pages
(``ChangelogProcessor.expire``; the join's own page) and emits their ``TTL`` markers, as
if each key were touched, before it processes the micro-batch's rows; every changelog
operator passes the row on to the operator downstream.

Input order within a key and micro-batch: retractions first, then additions, each in arrival
order. Every retraction refers to a row emitted in an *earlier* micro-batch (upstream operators
emit net changes per micro-batch), so this order is always valid, and the result of a
micro-batch does not depend on how Spark's shuffle interleaved the rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import numpy as np
import pandas as pd
from pyspark.sql import types as T

from operators_lib.changelog import ADDS
from operators_lib.plan import (
    EMIT_TS,
    LATE,
    LATE_WINDOW,
    OP,
    ROWNUM,
    SESSION_SPLIT,
    SWEEP,
    TTL_UPSTREAM,
)
from operators_lib.stream.event_time import one_frame
from operators_lib.stream.protocol import Processor, markers
from operators_lib.stream.state_view import STATE_SCHEMA, StateView
from operators_lib.types import FlinkType

NOW = "tw__now"  # the micro-batch's processing time (epoch ms): the state TTL clock
WRITTEN = "tw__written"  # in state: the TTL clock of a record's last write (join, GROUP BY)
_SLOT_SCHEMA = T.StructType([T.StructField("slot", T.LongType())])


def value_kind(t: FlinkType) -> str:
    if t.is_integral:
        return "int"
    if t.is_floating:
        return "float"
    return "other"


BUCKET, SLOT = "tw__bucket", "tw__slot"
KEY = "tw__key"  # a slot page's key columns: tw__key0, tw__key1 .. (SlotState)


def key_names(i: int) -> tuple[str, str]:
    """The grouping columns of an operator key's ``i``-th column (keying.grouping_keys): its
    NULL flag, and its value with NULL replaced by a default."""
    return f"tw__kn{i}", f"tw__kv{i}"


# Python calls per stateful operator and micro-batch, at most. Each call costs its state round
# trips (~0.5-1 ms each on two busy cores): 1,024 buckets cost a 1M-row OVER stream 1.1-2.8 s
# more than 256, a 20,000-row one 1.5 s (BENCHMARKS.md). 256 buckets still spread over a
# cluster's cores as Flink's default 128 key groups do.
BUCKETS = 256
SLOTS = 4096  # state pages per changelog operator, 16 per bucket (part of the checkpoint's layout)
_VECTORIZE = 4096  # rows of a bucket from which grouping by key runs in numpy


class Columns:
    """A bucket's input frame as Python lists, one ``tolist`` per column and micro-batch
    (pandas costs ~0.1 ms per operation: nothing per key)."""

    def __init__(self, df: pd.DataFrame):
        self.df = df
        self._cols: dict[str, list] = {}

    def __contains__(self, col: str) -> bool:
        return col in self.df.columns

    def __len__(self) -> int:
        return len(self.df)

    def __getitem__(self, col: str) -> list:
        if col not in self._cols:
            self._cols[col] = self.df[col].tolist()
        return self._cols[col]


class KeyRows:
    """One key's data rows of a micro-batch: positions in the bucket's ``Columns``,
    retractions first, and whether each row adds (+I, +U) or retracts (-U, -D)."""

    def __init__(self, cols: Columns, order: list[int], adds: list[bool]):
        self.cols, self.order, self.adds = cols, order, adds

    def __len__(self) -> int:
        return len(self.order)

    def values(self, col: str) -> list:
        """The column over the whole bucket (index it with ``order``)."""
        return self.cols[col]

    def array(self, col: str) -> np.ndarray:
        """This key's values of a column, in input order, as numpy."""
        return self.cols.df[col].to_numpy()[self.order]

    def rows(self, cols: Iterable[str], kinds: Iterable[str],
             at: list[int] | None = None) -> list[tuple]:
        """Rows (all, or those at positions ``at`` of the input order) as tuples of Python
        values, NULL as None (NaN, NaT), integers as int (a nullable integer column reaches
        pandas as float64)."""
        order = self.order if at is None else [self.order[i] for i in at]
        columns = []
        for c, kind in zip(cols, kinds):
            raw = self.cols[c]
            if kind == "int":
                columns.append([None if raw[i] != raw[i] or raw[i] is None else int(raw[i])
                                for i in order])
            else:
                columns.append([raw[i] if raw[i] == raw[i] else None for i in order])
        return list(zip(*columns)) if columns else [()] * len(order)


def read_input(frames: Iterable[pd.DataFrame], key_cols: list[str]
               ) -> tuple[Columns, dict[int, dict[tuple, KeyRows]], pd.DataFrame | None,
                          int | None]:
    """A bucket's micro-batch as (its columns, data rows per slot and operator key, marker
    rows, the ``tw__rownum`` of a state sweep row or None); drops end-of-input markers. Keys
    are tuples of the ``key_cols`` values."""
    df = one_frame(frames)
    cols = Columns(df)
    kinds = markers(df[ROWNUM].to_numpy(),
                    df[OP].to_numpy(dtype=object) if OP in df.columns else None)
    group = _group_rows if len(df) < _VECTORIZE else _group_arrays
    by_key, add = group(df, cols, key_cols, np.flatnonzero(kinds.data))
    by_slot: dict[int, dict[tuple, KeyRows]] = {}
    slots = cols[SLOT]
    for k, order in by_key.items():
        by_slot.setdefault(slots[order[0]], {})[k] = KeyRows(cols, order,
                                                            [add[i] for i in order])
    passed = np.flatnonzero(kinds.passed)
    return cols, by_slot, df.iloc[passed] if len(passed) else None, kinds.sweep


def _group_rows(df: pd.DataFrame, cols: Columns, key_cols: list[str], data: np.ndarray
                ) -> tuple[dict[tuple, list[int]], list[bool]]:
    """The ``data`` rows per key, each in input order (retractions first, then by arrival),
    and whether each row adds; in Python, cheapest for small buckets."""
    rownum = cols[ROWNUM]
    add = [True] * len(rownum) if OP not in cols else [o in ADDS for o in cols[OP]]
    rows = data.tolist()
    rows.sort(key=lambda i: (add[i], rownum[i]))
    keys = list(zip(*(cols[c] for c in key_cols)))
    by_key: dict[tuple, list[int]] = {}
    for i in rows:
        by_key.setdefault(keys[i], []).append(i)
    return by_key, add


def _group_arrays(df: pd.DataFrame, cols: Columns, key_cols: list[str], data: np.ndarray
                  ) -> tuple[dict[tuple, list[int]], list[bool]]:
    """``_group_rows`` in numpy: a bucket may hold a million rows."""
    rownum = df[ROWNUM].to_numpy()
    add = np.isin(df[OP].to_numpy(dtype=object), ADDS) if OP in df.columns else \
        np.ones(len(df), bool)
    codes = key_codes(df, key_cols)[data]
    order = data[np.lexsort((rownum[data], add[data], codes))].tolist()
    bounds = (np.flatnonzero(np.diff(np.sort(codes))) + 1).tolist()
    keys = [cols[c] for c in key_cols]
    groups = [order[a:b] for a, b in zip([0, *bounds], [*bounds, len(order)]) if a < b]
    groups.sort(key=lambda g: (add[g[0]], rownum[g[0]]))  # keys in _group_rows' order
    return {tuple(c[g[0]] for c in keys): g for g in groups}, add.tolist()


def key_codes(df: pd.DataFrame | dict[str, np.ndarray], key_cols: list[str]) -> np.ndarray:
    """A dense integer code per distinct key, numbered in order of first appearance (pandas'
    hash factorization, column by column: far cheaper than a groupby on the small frames of a
    bucket)."""
    n = len(df) if isinstance(df, pd.DataFrame) else len(next(iter(df.values())))
    factorized = (pd.factorize(df[c], sort=False, use_na_sentinel=False) for c in key_cols)
    return combined_codes(((inv, len(uniques)) for inv, uniques in factorized), n)


def combined_codes(columns: Iterable[tuple[np.ndarray, int]], n: int) -> np.ndarray:
    """One dense code per distinct combination of ``n`` rows' per-column codes (each column:
    its codes and how many distinct values it has), in order of first appearance."""
    code = np.zeros(n, dtype=np.int64)
    for inv, width in columns:
        code, _ = pd.factorize(code * max(width, 1) + inv, sort=False)
    return code


def page_key_codes(known: dict[str, np.ndarray] | None, rows: dict[str, np.ndarray],
                   keys: tuple[str, ...]) -> tuple[np.ndarray, dict[str, np.ndarray], int]:
    """The keys of ``rows`` as indexes into a bucket page's keys ``known`` (OVER,
    deduplication): (the rows' codes, the page's keys with the new ones appended, how many
    are new)."""
    m = 0 if known is None else len(known[keys[0]])
    both = {k: np.concatenate((known[k], rows[k])) if m else rows[k] for k in keys}
    codes = key_codes(both, list(keys))  # the page's m distinct keys come first: 0..m-1
    new_keys, first = np.unique(codes[m:], return_index=True)
    at = m + first[new_keys >= m]
    return codes[m:], {k: np.concatenate((both[k][:m], both[k][at])) for k in keys}, len(at)


def joint_key_codes(a: dict[str, np.ndarray], b: dict[str, np.ndarray], keys: tuple[str, ...]
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The keys of two sets of rows in one numbering (equal keys, equal codes): (codes of
    ``a``, codes of ``b``, whether each row of ``a`` / ``b`` has a key without NULL: a NULL
    key matches nothing)."""
    n = len(a[keys[0]])
    both = pd.DataFrame({k: np.concatenate((a[k], b[k])) for k in keys})
    codes = key_codes(both, list(keys))
    valid = ~both.isna().any(axis=1).to_numpy()
    return codes[:n], codes[n:], valid[:n], valid[n:]


class Changes:
    """The rows a processor emits for one bucket and micro-batch, built into one frame."""

    def __init__(self):
        self.rows: list[tuple] = []
        self.ops: list[str] = []
        self.rownums: list[int] = []

    def emit(self, rows: list[tuple], ops: list[str], rownums: list[int] | None = None) -> None:
        """``rownums``: each row's arrival order, for a TopN downstream (default 0)."""
        self.rows += rows
        self.ops += ops
        self.rownums += rownums or [0] * len(rows)


def output(changes: Changes, cols: list[str]) -> pd.DataFrame:
    # One object block: pandas builds it far faster than one array per column.
    block = np.empty((len(changes.rows), len(cols) + 3), dtype=object)
    for i, row in enumerate(changes.rows):
        block[i, :len(cols)] = row
    block[:, len(cols)] = changes.ops
    block[:, len(cols) + 1] = 0
    block[:, len(cols) + 2] = changes.rownums
    return pd.DataFrame(block, columns=[*cols, OP, EMIT_TS, ROWNUM])


def marker_output(late: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
    """Marker rows of upstream operators (late rows, windows' reports, expired state) travel on
    to the sink with NULL columns (a window's report with its ``tw__ts`` when it reached this
    operator); expired state further up can no longer be tied to this operator's keys."""
    out = pd.DataFrame({c: pd.Series([None] * len(late), dtype=object) for c in cols})
    ops = late[OP].to_numpy()
    windows = np.isin(ops, (LATE_WINDOW, SESSION_SPLIT))
    out[OP] = np.where(windows | (ops == LATE), ops, TTL_UPSTREAM)
    out[EMIT_TS] = np.where(windows, late[EMIT_TS].to_numpy(dtype=np.int64), 0) if (
        EMIT_TS in late.columns) else np.zeros(len(late), dtype=np.int64)
    out[ROWNUM] = late[ROWNUM].to_numpy(dtype=np.int64)
    return out


def sweep_output(rownum: int, cols: list[str]) -> pd.DataFrame:
    """A state sweep row passed on downstream (module docstring)."""
    out = pd.DataFrame({c: pd.Series([None], dtype=object) for c in cols})
    out[OP], out[EMIT_TS], out[ROWNUM] = SWEEP, 0, rownum
    return out


def clock(cols: Columns, ttl_ms: int | None) -> int | None:
    """The TTL clock of this micro-batch (None without TTL)."""
    return int(max(cols[NOW])) if ttl_ms and NOW in cols and len(cols) else None


class SlotState:
    """The operator keys' values, one page per slot in a MapState of the bucket: read and
    written once per slot and micro-batch. Every state call is a round trip to the JVM
    (~0.1-0.3 ms), so keys share a call per slot, and a bucket without state is asked once
    (``exists``), not once per slot. A page is a row per key (stream/state_view.py): the key's
    columns ``tw__key<i>``, then the value's (the processor's ``value_names``). A key's value
    is built from its row only when the micro-batch touches the key (``load``/``dump``)."""

    def __init__(self, handle, processor: ChangelogProcessor):
        self.map = handle.getMapState(processor.name, _SLOT_SCHEMA, STATE_SCHEMA)
        self.view = StateView(processor.name)
        self.processor = processor
        self.empty = True

    def open_bucket(self) -> None:
        self.empty = not self.map.exists()

    def get(self, slot: int) -> dict:
        """The slot's page: each key's row (its value's fields)."""
        value = None if self.empty else self.map.getValue((slot,))
        return {} if value is None else self._page(value[0])

    def put(self, slot: int, page: dict) -> None:
        if page:
            columns = {f"{KEY}{i}": list(c) for i, c in enumerate(zip(*page))}
            columns.update(zip(self.processor.value_names, map(list, zip(*page.values()))))
            blob = self.view.dumps_rows(columns, self.processor.page_types)
            self.map.updateValue((slot,), (blob,))
        elif not self.empty:
            self.map.removeKey((slot,))

    def sweep(self, expire: Callable) -> None:
        """Rewrite the bucket's pages, each key's value replaced by ``expire(key, value)``
        (None: the key is dropped; the same object: unchanged)."""
        if self.empty:
            return
        for (slot,), (blob,) in list(self.map.iterator()):
            page, changed = self._page(blob), False
            for k, row in list(page.items()):
                value = self.load(row)
                kept = expire(k, value)
                if kept is None:
                    del page[k]
                elif kept is not value:
                    page[k] = self.dump(kept)
                changed = changed or kept is not value
            if changed:
                self.put(slot, page)

    def load(self, row: tuple | None):
        return None if row is None else self.processor.value_of(row)

    def dump(self, value) -> tuple:
        return self.processor.value_row(value)

    def _page(self, blob: bytes) -> dict:
        batch = self.view.loads_rows(blob)
        n = sum(name.startswith(KEY) for name in batch.column_names)
        return {row[:n]: row[n:] for row in zip(*(c.to_pylist() for c in batch.columns))}


class ChangelogProcessor(Processor):
    """Base of the changelog operators, grouped by bucket: marker rows pass through to the
    sink, each operator key's data rows (retractions first) and stored value go to
    ``process``, which returns the key's new value (None: nothing to keep)."""

    cols: list[str]  # output columns
    now: int | None  # the TTL clock of the micro-batch (None without TTL)
    value_names: list[str]  # a value's fields, its columns in a slot page (SlotState)
    page_types: dict  # the Arrow type of a slot page's columns, where known

    def __init__(self, key_cols: list[str], ttl_ms: int | None):
        self.key_cols = key_cols  # the operator key's columns (keying.grouping_keys)
        self.ttl_ms = ttl_ms

    def init(self, handle) -> None:
        self.handle = handle
        self.state = SlotState(handle, self)

    def handleInputRows(self, key, rows, timerValues) -> Iterator[pd.DataFrame]:
        cols, by_slot, passed, sweep = read_input(rows, self.key_cols)
        if passed is not None:
            yield marker_output(passed, self.cols)
        if sweep is not None:
            yield sweep_output(sweep, self.cols)
        self.now = clock(cols, self.ttl_ms)
        if not by_slot and (sweep is None or self.now is None):
            return
        self.state.open_bucket()
        changes = Changes()
        if sweep is not None and self.now is not None:
            cutoff = self.now - self.ttl_ms
            self.state.sweep(lambda k, v: self.expire(k, v, cutoff, changes))
        for slot, by_key in by_slot.items():
            page = self.state.get(slot)
            for k, data in by_key.items():
                value = self.process(k, data, self.state.load(page.get(k)), changes)
                if value is None:
                    page.pop(k, None)
                else:
                    page[k] = self.state.dump(value)
            self.state.put(slot, page)
        if changes.rows:
            yield output(changes, self.cols)

    def value_row(self, value) -> tuple:
        """A key's value as its fields (``value_names``: Python values Arrow types)."""
        raise NotImplementedError

    def value_of(self, row: tuple):
        """The value ``value_row`` gave the fields of."""
        raise NotImplementedError

    def process(self, key: tuple, data: KeyRows, stored, changes: Changes):
        raise NotImplementedError

    def expire(self, key: tuple, stored, cutoff: int, changes: Changes):
        """A key's value without what was last written before ``cutoff`` (the TTL clock),
        its ``TTL`` marker emitted: None if nothing is left, ``stored`` itself if nothing
        expired. Operators with state TTL override it."""
        return stored

