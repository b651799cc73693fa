"""Vectorized aggregate kernels of the stream OVER and window operators (numpy, across keys).

``windowed`` computes each output row's aggregate over an index range ``[start, end]`` of the
rows (bounded frames, windows: ranges never cross from one key to another); ``running``
continues unbounded aggregates, per segment of rows (a key's), from stored accumulators.
NULL inputs are skipped; an aggregate over no non-NULL value is NULL (COUNT: 0). Numbers follow
Flink: integer sums wrap at the type's width (so does AVG's over an OVER window; a window
aggregate's AVG adds in BIGINT), integer AVG truncates toward 0, floating-point
sums add in row order (no pairwise or compensated summation). FIRST_VALUE, LAST_VALUE and
LISTAGG take a range's first / last / all non-NULL values in row order (FIRST_VALUE and
LAST_VALUE also as running values of an unbounded OVER window), M2 (of STDDEV_* / VAR_*,
sql/aggregate.py) replays Flink's Welford accumulate steps over them (windows only: an OVER
window's statistical aggregates are planned as SUM and COUNT, as Flink does). Results come as
output columns in the operator's pandas dtype (``Int64``, ``float64`` or ``object``).
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pandas as pd

from operators_lib.plan import AggCall


def as_array(values, call: AggCall) -> tuple[np.ndarray, np.ndarray]:
    """(values, valid mask) in the dtype the kernels use for ``call``'s argument. (Integer
    columns with NULLs reach Python as float64: exact up to 2**53.)"""
    values = np.asarray(values)
    valid = ~pd.isna(values)
    t = call.arg_type
    if t is not None and t.is_integral:
        return np.where(valid, values, 0).astype(np.int64), valid
    if t is not None and t.is_floating:
        return values.astype(np.float64), valid
    return values.astype(object), valid


def acc_dtype(call: AggCall) -> type:
    """The dtype of ``call``'s running value (``running``'s accumulators)."""
    t = call.arg_type
    if t is not None and t.is_integral:
        return np.int64
    if t is not None and t.is_floating:
        return np.float64
    return object


def empty_acc(call: AggCall, n: int) -> np.ndarray:
    """``n`` accumulators that have seen nothing: the identity of ``call``'s operation."""
    dtype = acc_dtype(call)
    if dtype is object:
        return np.full(n, None, dtype=object)
    return _fill(np.zeros(n, dtype), np.zeros(n, bool), call.func)


def _fill(arr: np.ndarray, valid: np.ndarray, func: str) -> np.ndarray:
    if func in ("SUM", "AVG", "COUNT"):
        return np.where(valid, arr, 0)
    if arr.dtype == np.int64:
        info = np.iinfo(np.int64)
        return np.where(valid, arr, info.min if func == "MAX" else info.max)
    return np.where(valid, arr, -np.inf if func == "MAX" else np.inf)


_UFUNCS = {"SUM": np.add, "AVG": np.add, "MAX": np.maximum, "MIN": np.minimum}


def windowed(call: AggCall, arr: np.ndarray, valid: np.ndarray, starts: np.ndarray,
             ends: np.ndarray, dtype: str, over: bool = False):
    """Aggregate of rows ``starts[i]..ends[i]`` (inclusive) for every i (``over``: of an OVER
    window, whose integer AVG adds in the argument's type)."""
    if call.func in _ORDERED:
        return _ordered(call, arr, valid, starts, ends, dtype)
    counts = np.concatenate(([0], np.cumsum(valid)))
    cnt = counts[ends + 1] - counts[starts]
    if call.func == "COUNT":
        return _counts(ends - starts + 1 if call.arg is None else cnt)
    if arr.dtype == object:
        return [_object_agg(call, arr[s:e + 1][valid[s:e + 1]]) for s, e in zip(starts, ends)]
    filled = np.append(_fill(arr, valid, call.func), arr[:1] * 0)
    idx = np.empty(2 * len(starts), dtype=np.int64)
    idx[0::2], idx[1::2] = starts, ends + 1
    values = _UFUNCS[call.func].reduceat(filled, idx)[0::2] if len(idx) else filled[:0]
    return _finish(call, values, cnt, dtype, over)


def running(call: AggCall, arr: np.ndarray, valid: np.ndarray, firsts: np.ndarray,
            counts: np.ndarray, values: np.ndarray, dtype: str):
    """Aggregate of each row and all rows before it in its segment, the segments (keys)
    starting at ``firsts`` and continuing the accumulators ``counts`` / ``values`` (one per
    segment, updated in place). Returns the output column."""
    n = len(arr)
    lengths = np.diff(np.append(firsts, n))
    seg = np.repeat(np.arange(len(firsts)), lengths)
    pos = np.arange(n) - firsts[seg]
    seen = np.cumsum(valid)
    before = np.where(firsts > 0, seen[firsts - 1], 0)
    cnt = counts[seg] + seen - before[seg]
    last = firsts + lengths - 1
    if call.func == "COUNT":
        out = counts[seg] + pos + 1 if call.arg is None else cnt
        counts[:] = out[last]
        return _counts(out)
    if call.func in ("FIRST_VALUE", "LAST_VALUE"):
        return _running_pick(call, arr, valid, firsts, seg, counts, values, cnt, dtype)
    if arr.dtype == object:
        out = []
        for i, (first, length) in enumerate(zip(firsts, lengths)):
            cur, c = values[i], counts[i]
            for v, ok in zip(arr[first:first + length], valid[first:first + length]):
                if ok:
                    c += 1
                    cur = v if cur is None else _combine(call.func, cur, v)
                out.append(_object_agg(call, None, cur, c))
            values[i], counts[i] = cur, c
        return out
    filled = _fill(arr, valid, call.func)
    ufunc = _UFUNCS[call.func]
    filled[firsts] = ufunc(values, filled[firsts])  # each segment continues its accumulator
    acc = _accumulate(ufunc, filled, firsts, lengths, seg, pos)
    counts[:], values[:] = cnt[last], acc[last]
    return _finish(call, acc, cnt, dtype, over=True)


def _running_pick(call: AggCall, arr: np.ndarray, valid: np.ndarray, firsts: np.ndarray,
                  seg: np.ndarray, counts: np.ndarray, values: np.ndarray, cnt: np.ndarray,
                  dtype: str):
    """FIRST_VALUE / LAST_VALUE of each row and all before it (NULLs skipped): the stored
    value (the segment's first / last so far) where the segment's rows up to the row hold no
    non-NULL one that decides."""
    n, idx = len(arr), np.arange(len(arr))
    start = firsts[seg]
    if call.func == "LAST_VALUE":
        at = np.maximum.accumulate(np.where(valid, idx, -1)) if n else idx
        mine = at >= start  # a non-NULL value of this segment at or before the row
    else:
        nonnull = np.flatnonzero(valid)
        first = nonnull[np.minimum(np.searchsorted(nonnull, firsts), max(len(nonnull) - 1, 0))] \
            if len(nonnull) else np.full(len(firsts), n)
        at = first[seg]
        mine = (counts[seg] == 0) & (at >= start) & (at <= idx)
    stored = counts[seg] > 0
    empty = ~mine & ~stored
    picked = np.where(mine, np.where(mine, at, 0), 0)
    out = np.where(mine, arr[picked] if n else arr, values[seg])
    last = np.append(firsts[1:], n) - 1
    values[:] = out[last]
    counts[:] = cnt[last]
    if dtype == "Int64":
        return pd.arrays.IntegerArray(np.where(empty, 0, out).astype(np.int64), empty)
    if dtype == "float64":
        return np.where(empty, np.nan, out.astype(np.float64))
    return [None if e else v for v, e in zip(list(out), empty)]


def _accumulate(ufunc, x: np.ndarray, firsts: np.ndarray, lengths: np.ndarray,
                seg: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """``ufunc.accumulate`` within each segment, in row order (floating-point sums as Flink
    adds them): the segments as the rows of one grid, accumulated along them; a very uneven
    spread of lengths (the grid would be mostly padding) one segment at a time."""
    if not len(x):
        return x
    width = int(lengths.max())
    if len(firsts) * width <= 4 * len(x) + 4096:
        grid = np.zeros((len(firsts), width), x.dtype)
        grid[seg, pos] = x
        return ufunc.accumulate(grid, axis=1)[seg, pos]
    return np.concatenate([ufunc.accumulate(x[f:f + n]) for f, n in zip(firsts, lengths)])


_ORDERED = ("FIRST_VALUE", "LAST_VALUE", "LISTAGG", "M2")


def _ordered(call: AggCall, arr: np.ndarray, valid: np.ndarray, starts: np.ndarray,
             ends: np.ndarray, dtype: str):
    """FIRST_VALUE / LAST_VALUE / LISTAGG / M2 of each range's non-NULL values in row order
    (a window's rows are in arrival order): M2 replays Flink's Welford steps in DOUBLE."""
    at = np.flatnonzero(valid)
    lo, hi = np.searchsorted(at, starts), np.searchsorted(at, ends, "right")
    empty = lo >= hi
    if call.func in ("FIRST_VALUE", "LAST_VALUE"):
        pick = at[np.minimum(lo if call.func == "FIRST_VALUE" else hi - 1, len(at) - 1)] \
            if len(at) else np.zeros(len(starts), np.int64)
        values = arr[pick] if len(arr) else arr[:0]
    elif call.func == "LISTAGG":
        sep = "," if call.separator is None else call.separator
        values = [sep.join(arr[at[a:b]]) for a, b in zip(lo, hi)]
    else:
        values = []
        for a, b in zip(lo, hi):
            n, mean, m2 = 0, 0.0, 0.0
            for v in arr[at[a:b]]:
                x = float(v)
                n += 1
                delta = x - mean
                mean += delta / n
                m2 += delta * (x - mean)
            values.append(m2)
        values = np.asarray(values, dtype=np.float64)
        empty = empty | (values < 0) if len(values) else empty
    if dtype == "Int64":
        return pd.arrays.IntegerArray(np.where(empty, 0, values).astype(np.int64), empty)
    if dtype == "float64":
        return np.where(empty, np.nan, np.asarray(values, dtype=np.float64))
    return [None if e else v for v, e in zip(list(values), empty)]


def _counts(values: np.ndarray):
    return pd.array(np.asarray(values, dtype=np.int64), dtype="Int64")


def _combine(func: str, a, b):
    if func in ("SUM", "AVG"):
        return a + b
    return max(a, b) if func == "MAX" else min(a, b)


def _object_agg(call: AggCall, values, total=None, n=None):
    """MIN/MAX of strings/timestamps and DECIMAL arithmetic, in Python."""
    if values is not None:
        n = len(values)
        if n == 0:
            return None
        total = values[0]
        for v in values[1:]:
            total = _combine(call.func, total, v)
    if not n:
        return None
    if call.func == "AVG":
        return (Decimal(total) / n).quantize(Decimal(1).scaleb(-call.type.scale), ROUND_HALF_UP)
    return total


def _finish(call: AggCall, values: np.ndarray, cnt: np.ndarray, dtype: str, over: bool):
    t = call.type
    if t.is_integral and t.integral_bits() < 64 and (call.func == "SUM" or over):
        # Flink's SUM adds in the argument's type: it wraps; so does AVG over an OVER window,
        # where a window aggregate's AVG adds in BIGINT (measured, Flink 2.3)
        lim = 2 ** (t.integral_bits() - 1)
        values = (values + lim) % (2 * lim) - lim
    if call.func == "AVG":
        if t.is_integral:  # Java integer division truncates toward zero
            # exact in int64 (a float quotient loses digits past 2^53)
            q = np.abs(values.astype(np.int64)) // np.maximum(cnt, 1)
            values = np.where(values < 0, -q, q)
        else:
            values = values / np.maximum(cnt, 1)
    empty = cnt == 0
    if dtype == "Int64":
        return pd.arrays.IntegerArray(np.where(empty, 0, values).astype(np.int64), empty)
    if dtype == "float64":
        return np.where(empty, np.nan, values).astype(np.float64)
    return [None if e else v for v, e in zip(values.tolist(), empty)]
