"""The stream OVER and window kernels against a brute-force Python reference (random windows,
keys and NULLs)."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

from operators_lib.plan import AggCall
from operators_lib.stream.window_aggs import as_array, empty_acc, running, windowed
from operators_lib.types import FlinkType

INT, DOUBLE = FlinkType("INT"), FlinkType("DOUBLE")


def _reference(func: str, values: list, out_type: FlinkType):
    vals = [v for v in values if v is not None]
    if func == "COUNT":
        return len(vals)
    if not vals:
        return None
    if func == "MIN":
        return min(vals)
    if func == "MAX":
        return max(vals)
    total = 0
    for v in vals:  # in row order, as Flink adds
        total += v
    if out_type.is_integral:
        total = (total + 2**31) % 2**32 - 2**31
        if func == "AVG":
            return int(total / len(vals))  # truncation toward zero
        return total
    return total if func == "SUM" else total / len(vals)


def _close(a, b) -> bool:
    """Equal; an AVG's division may round its last bit apart from Python's."""
    if a is None or b is None or pd.isna(a) or pd.isna(b):
        return (a is None or pd.isna(a)) and (b is None or pd.isna(b))
    return a == b or abs(a - b) <= 1e-12 * abs(b)


def _values(column) -> list:
    return [None if pd.isna(v) else v for v in column]


@pytest.mark.parametrize("func", ["COUNT", "SUM", "AVG", "MIN", "MAX"])
@pytest.mark.parametrize("arg_type", [INT, DOUBLE])
def test_windowed_and_running_match_brute_force(func, arg_type):
    rng = random.Random(f"{func}{arg_type.name}")
    for _ in range(30):
        n = rng.randint(1, 25)
        values = [None if rng.random() < 0.3 else (
            rng.randint(-2**31, 2**31 - 1) if arg_type.is_integral and rng.random() < 0.2 else
            rng.randint(-50, 50) if arg_type.is_integral else rng.uniform(-1e3, 1e3))
            for _ in range(n)]
        out_type = FlinkType("BIGINT") if func == "COUNT" else arg_type
        call = AggCall(func, "x", arg_type, "o", out_type)
        arr, valid = as_array(pd.Series(values, dtype="Int64" if arg_type.is_integral
                                        else "float64"), call)
        starts = np.array([rng.randint(0, i) for i in range(n)])
        ends = np.arange(n)
        dtype = "float64" if out_type.is_floating else "Int64"
        got = _values(windowed(call, arr, valid, starts, ends, dtype))
        want = [_reference(func, values[s:e + 1], out_type) for s, e in zip(starts, ends)]
        assert all(_close(g, w) for g, w in zip(got, want)), (values, starts, got, want)
        # running over random segments (keys) == windowed from each segment's start, also
        # when continued from the accumulators in a second piece
        firsts = np.array(sorted({0, *rng.sample(range(n), rng.randint(0, n - 1))}))
        lengths = np.diff(np.append(firsts, n))
        cuts = [rng.randint(0, k) for k in lengths]
        counts, accs = np.zeros(len(firsts), np.int64), empty_acc(call, len(firsts))
        pieces = []
        for part in (0, 1):  # each segment's rows before its cut, then the rest
            idx = np.concatenate([np.arange(f, f + c) if part == 0 else
                                  np.arange(f + c, f + k)
                                  for f, k, c in zip(firsts, lengths, cuts)]).astype(int)
            keep = [i for i, (k, c) in enumerate(zip(lengths, cuts))
                    if (c if part == 0 else k - c) > 0]
            sizes = [(cuts[i] if part == 0 else lengths[i] - cuts[i]) for i in keep]
            sub_counts, sub_accs = counts[keep], accs[keep]
            got = _values(running(call, arr[idx], valid[idx],
                                  np.cumsum([0, *sizes[:-1]]).astype(np.int64),
                                  sub_counts, sub_accs, dtype)) if len(idx) else []
            counts[keep], accs[keep] = sub_counts, sub_accs
            pieces += list(zip(idx, got))
        want = {i: _reference(func, values[f:i + 1], out_type)
                for f, k in zip(firsts, lengths) for i in range(f, f + k)}
        assert all(_close(g, want[i]) for i, g in pieces), (values, firsts, cuts, pieces, want)


def test_count_star_counts_null_rows():
    call = AggCall("COUNT", None, None, "o", FlinkType("BIGINT"))
    arr, valid = np.zeros(4), np.ones(4, bool)
    assert list(windowed(call, arr, valid, np.array([0, 0, 1, 2]), np.arange(4), "Int64")) == [
        1, 2, 2, 2]


def test_running_sums_add_in_row_order_per_key_on_both_paths():
    """A floating-point running SUM adds each key's rows in order (Flink's result, not a
    pairwise or compensated sum), whether the keys' rows are accumulated as one grid or, when
    one key has far more rows than the others, one key at a time."""
    rng = np.random.default_rng(3)
    call = AggCall("SUM", "x", DOUBLE, "o", DOUBLE)
    for lengths in ([5, 7, 3], [20_000] + [1] * 3_000):  # the grid; one key at a time
        n = sum(lengths)
        arr = rng.uniform(-1e6, 1e6, n) * 10.0 ** rng.integers(-8, 8, n)
        firsts = np.cumsum([0, *lengths[:-1]])
        got = running(call, arr, np.ones(n, bool), firsts, np.zeros(len(firsts), np.int64),
                      empty_acc(call, len(firsts)), "float64")
        want = []
        for f, k in zip(firsts, lengths):
            total = 0.0
            for v in arr[f:f + k]:
                total += v
                want.append(total)
        assert got.tolist() == want
