"""A join's residual condition over candidate pairs (``truth``), with the values it computes
from both inputs (plan.Calc), evaluated as Spark evaluates them in batch mode: NULL in, NULL
out; integer results outside their type's range fail the run (Spark's ANSI arithmetic raises
there too); ``||`` concatenates text."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from operators_lib.plan import Calc, Cond

_BITS = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}
_OPS: dict[str, Callable] = {"+": lambda a, b: a + b, "-": lambda a, b: a - b,
                             "*": lambda a, b: a * b, "||": lambda a, b: a + b}


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


def truth(cond: Cond, column: Callable[[str], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """``cond`` over candidate pairs: (value, known) masks, SQL's three-valued logic (unknown:
    a NULL operand). ``column(name)``: that column's values, one per pair (None for NULL)."""
    if cond.op in ("AND", "OR"):
        (a, ka), (b, kb) = (truth(c, column) for c in cond.args)
        if cond.op == "AND":  # FALSE if either is known FALSE
            return a & b & ka & kb, (ka & kb) | (ka & ~a) | (kb & ~b)
        return (a & ka) | (b & kb), (ka & kb) | (ka & a) | (kb & b)
    if cond.op == "NOT":
        a, ka = truth(cond.args[0], column)
        return ~a, ka
    if cond.op == "COL":
        v = column(cond.args[0])
        known = ~pd.isna(v)
        return np.where(known, v, False).astype(bool), known
    x, y = (_values(a, column) for a in cond.args)
    nx, ny = pd.isna(x), pd.isna(y)
    known = ~nx & ~ny
    value = np.zeros(len(x), bool)
    value[known] = _COMPARE[cond.op](x[known], y[known])
    if cond.op == "<=>":
        return value | (nx & ny), np.ones(len(x), bool)
    return value, known


def _values(arg: str | Calc, column: Callable[[str], np.ndarray]) -> np.ndarray:
    """A comparison operand's values over the candidate pairs: a column, or computed from
    both inputs (``vector``)."""
    if isinstance(arg, Calc):
        return vector(arg, lambda a: _values(a, column))
    return column(arg)


_COMPARE = {"=": np.equal, "<=>": np.equal, "<>": np.not_equal, "<": np.less,
            "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}
