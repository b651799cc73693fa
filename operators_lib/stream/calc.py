"""Values a join's residual condition computes from both inputs (plan.Calc), evaluated as
Spark evaluates them in batch mode: NULL in, NULL out; integer results outside their type's
range fail the run (Spark's ANSI arithmetic raises there too); ``||`` concatenates text."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from operators_lib.plan import Calc

_BITS = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}
_OPS: dict[str, Callable] = {"+": lambda a, b: a + b, "-": lambda a, b: a - b,
                             "*": lambda a, b: a * b, "||": lambda a, b: a + b}


def _checked(value, calc: Calc):
    bits = _BITS.get(calc.type)
    if bits is not None:
        value = int(value)
        if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
            raise ArithmeticError(f"{calc.type} overflow in a join condition ({calc.op}): "
                                  f"{value}")
    elif calc.type == "DOUBLE":
        value = float(value)
    return value


def scalar(calc: Calc, args: list):
    """One value from its arguments' values (None for NULL)."""
    if any(a is None for a in args):
        return None
    if calc.type in _BITS:
        args = [int(a) for a in args]
    elif calc.type == "STRING":
        args = [str(a) for a in args]
    if calc.op == "NEG":
        return _checked(-args[0], calc)
    return _checked(_OPS[calc.op](*args), calc)


def vector(calc: Calc, operand: Callable[[object], np.ndarray]) -> np.ndarray:
    """Values over candidate pairs (an object array, None for NULL): ``operand(arg)`` gives
    an argument's values. Integers are computed as Python integers (exact), then checked."""
    args = [operand(a) for a in calc.args]
    null = np.zeros(len(args[0]), bool)
    for a in args:
        null |= pd.isna(a)
    if calc.type in _BITS:
        args = [np.where(null, 0, a).astype(np.int64).astype(object) for a in args]
    elif calc.type == "DOUBLE":
        args = [np.where(null, 0.0, a).astype(np.float64) for a in args]
    else:
        args = [np.where(null, "", a).astype(str).astype(object) for a in args]
    value = -args[0] if calc.op == "NEG" else _OPS[calc.op](*args)
    bits = _BITS.get(calc.type)
    if bits is not None:
        bad = ~null & ((value < -(2 ** (bits - 1))) | (value >= 2 ** (bits - 1)))
        if bad.any():
            raise ArithmeticError(f"{calc.type} overflow in a join condition ({calc.op}): "
                                  f"{value[bad][0]}")
    out = np.asarray(value, dtype=object)
    out[null] = None
    return out
