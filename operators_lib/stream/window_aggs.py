"""Vectorized aggregate kernels for the stream OVER operator (numpy, one call per key and batch).

``windowed`` computes each output row's aggregate over an index range ``[start, end]`` of the
rows of one partition (bounded frames); ``running`` continues unbounded aggregates from a stored
accumulator. NULL inputs are skipped; an aggregate over no non-NULL value is NULL (COUNT: 0).
Numbers follow Flink: integer sums wrap at the type's width, integer AVG truncates toward 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pandas as pd

from operators_lib.plan import AggCall


@dataclass
class Acc:
    """Running state of one unbounded aggregate: non-NULL count and SUM/MIN/MAX so far."""

    count: int = 0
    value: object = None


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


def _fill(arr: np.ndarray, valid: np.ndarray, func: str) -> np.ndarray:
    if func in ("SUM", "AVG"):
        return np.where(valid, arr, 0)
    if arr.dtype == np.int64:
        info = np.iinfo(np.int64)
        return np.where(valid, arr, info.min if func == "MAX" else info.max)
    return np.where(valid, arr, -np.inf if func == "MAX" else np.inf)


def windowed(call: AggCall, arr: np.ndarray, valid: np.ndarray, starts: np.ndarray,
             ends: np.ndarray) -> list:
    """Aggregate of rows ``starts[i]..ends[i]`` (inclusive) for every i."""
    counts = np.concatenate(([0], np.cumsum(valid)))
    cnt = counts[ends + 1] - counts[starts]
    if call.func == "COUNT":
        if call.arg is None:
            return list(ends - starts + 1)
        return list(cnt)
    if arr.dtype == object:
        return [_object_agg(call, arr[s:e + 1][valid[s:e + 1]]) for s, e in zip(starts, ends)]
    ufunc = {"SUM": np.add, "AVG": np.add, "MAX": np.maximum, "MIN": np.minimum}[call.func]
    filled = np.append(_fill(arr, valid, call.func), arr[:1] * 0)
    idx = np.empty(2 * len(starts), dtype=np.int64)
    idx[0::2], idx[1::2] = starts, ends + 1
    values = ufunc.reduceat(filled, idx)[0::2] if len(idx) else filled[:0]
    return _finish(call, values, cnt)


def running(call: AggCall, acc: Acc, arr: np.ndarray, valid: np.ndarray) -> list:
    """Aggregate of all rows up to each row, continuing ``acc`` (updated in place)."""
    cnt = acc.count + np.cumsum(valid)
    if call.func == "COUNT":
        base = acc.count + (np.arange(1, len(valid) + 1) if call.arg is None else np.cumsum(valid))
        acc.count = int(base[-1]) if len(base) else acc.count
        return list(base)
    if arr.dtype == object:
        out, cur, n = [], acc.value, acc.count
        for v, ok in zip(arr, valid):
            if ok:
                n += 1
                cur = v if cur is None else _combine(call.func, cur, v)
            out.append(_object_agg(call, None, cur, n))
        acc.count, acc.value = n, cur
        return out
    filled = _fill(arr, valid, call.func)
    seed = acc.value if acc.value is not None else _fill(arr[:1], np.zeros(1, bool),
                                                          call.func)[0] if len(arr) else 0
    if call.func in ("SUM", "AVG"):
        values = np.cumsum(np.concatenate(([seed], filled)))[1:]  # sequential, like Spark
    else:
        ufunc = np.maximum if call.func == "MAX" else np.minimum
        values = ufunc.accumulate(np.concatenate(([seed], filled)))[1:]
    if len(values):
        acc.count, acc.value = int(cnt[-1]), values[-1].item()
    return _finish(call, values, cnt)


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


def _finish(call: AggCall, values: np.ndarray, cnt: np.ndarray) -> list:
    t = call.type
    if t.is_integral and t.integral_bits() < 64:
        lim = 2 ** (t.integral_bits() - 1)  # Flink sums in the argument's type: it wraps
        values = (values + lim) % (2 * lim) - lim
    if call.func == "AVG":
        if t.is_integral:  # Java integer division truncates toward zero
            values = np.trunc(values / np.maximum(cnt, 1)).astype(np.int64)
        else:
            values = values / np.maximum(cnt, 1)
    out = values.tolist()
    return [v if c > 0 else None for v, c in zip(out, cnt)]
