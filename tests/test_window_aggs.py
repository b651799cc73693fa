"""The stream OVER kernels against a brute-force Python reference (random windows and NULLs)."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

from operators_lib.plan import AggCall
from operators_lib.stream.window_aggs import Acc, as_array, running, windowed
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
    total = sum(vals)
    if out_type.is_integral:
        total = (total + 2**31) % 2**32 - 2**31
        if func == "AVG":
            return int(total / len(vals))  # truncation toward zero
        return total
    return total if func == "SUM" else total / len(vals)


def _close(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))


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
        got = windowed(call, arr, valid, starts, ends)
        want = [_reference(func, values[s:e + 1], out_type) for s, e in zip(starts, ends)]
        assert all(_close(g, w) for g, w in zip(got, want)), (values, starts, got, want)
        # running == windowed from 0, also when continued from an accumulator in two pieces
        acc = Acc()
        cut = rng.randint(0, n)
        got = running(call, acc, arr[:cut], valid[:cut]) + running(call, acc, arr[cut:],
                                                                  valid[cut:])
        want = [_reference(func, values[:e + 1], out_type) for e in range(n)]
        assert all(_close(g, w) for g, w in zip(got, want)), (values, cut, got, want)


def test_count_star_counts_null_rows():
    call = AggCall("COUNT", None, None, "o", FlinkType("BIGINT"))
    arr, valid = np.zeros(4), np.ones(4, bool)
    assert windowed(call, arr, valid, np.array([0, 0, 1, 2]), np.arange(4)) == [1, 2, 2, 2]
