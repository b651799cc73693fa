"""A Python UDF as Spark calls it on the executors: the user's function, its results checked
against the declared Flink type, and its exceptions made the run's error.

Spark pickles these objects with the UDF (the user's function by value, sql/python_udfs.py); an
executor unpickling one imports this module first, which installs twinflow's PyFlink API
(udf/pyflink_api.py) for the user's module to import.

Result rules (as Flink converts a Python result, or fails the job): None is NULL; an integer
type takes a Python int (or a numpy integer) within its range; FLOAT and DOUBLE a float or an
int (NaN and infinities are refused: they would meet Spark's operators, not Flink's; a
vectorized function's NaN is NULL, as Arrow reads it in both); DECIMAL(p, s) an int or Decimal
with at most s fraction digits and p digits; STRING a str; BOOLEAN a bool. Anything else, and
any exception the function raises, fails the run with a DataError (exit 2) naming the function
and its arguments: an exception is the run's error, as it fails Flink's job.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable
from decimal import Decimal

import pandas as pd

from operators_lib.errors import DATA_ERROR, VALUE_REFUSED
from operators_lib.plan import MARKERS, OP, ROWNUM, SWEEP
from operators_lib.types import FlinkType
from operators_lib.udf import pyflink_api

pyflink_api.install()

PREFIX = "tw_udf_"  # a Python function's name in the Spark session (reserved, as tw__ columns)
TRY_PREFIX = f"{PREFIX}try_"  # its test run on a row in reject mode (udf/rejects.py)
# Its call as planned: the first argument says whether the row is data (sql/python_udfs.py).
_CALL = re.compile(rf"\b({PREFIX}\w+)\(TRUE(?=[,)])")


def data_rows_only(spark_sql: str, columns: list[str]) -> str:
    """``spark_sql`` with each Python call told which rows of the DataFrame with ``columns``
    are data: a stream's marker, sweep and end-of-input rows carry NULLs (plan.py), and Spark
    calls a Python function on every row that reaches its step, where Flink never gives it
    such a row. (Spark filters on a WHERE's other conjuncts first, which the planner puts in a
    filter of their own.)"""
    if PREFIX not in spark_sql:
        return spark_sql
    data = f"({ROWNUM} >= 0)" if ROWNUM in columns else "TRUE"
    if OP in columns:
        data = f"({data} AND NOT coalesce({OP} IN ({', '.join(map(repr, (*MARKERS, SWEEP)))}), "\
               "false))"
    return _CALL.sub(lambda m: f"{m.group(1)}({data}", spark_sql)


def calls_python(spark_sql: str) -> bool:
    """Does the expression call a Python function?"""
    return _CALL.search(spark_sql) is not None


class UdfFailed(RuntimeError):
    """Raised on an executor: errors.classify reads its message as a DataError."""


def checked(name: str, t: FlinkType, value: object) -> object:
    """``value`` as the declared result type ``t``, or UdfFailed."""
    if value is None:
        return None
    ok, marker = True, DATA_ERROR
    if t.is_integral:
        ok = isinstance(value, numbers.Integral) and not isinstance(value, bool) and (
            -(2 ** (t.integral_bits() - 1)) <= int(value) < 2 ** (t.integral_bits() - 1))
        value = int(value) if ok else value
    elif t.name in ("FLOAT", "DOUBLE"):
        ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
        value = float(value) if ok else value
        if ok and not math.isfinite(value):  # Spark's NaN is not Flink's past an operator
            ok, marker = False, VALUE_REFUSED
    elif t.name == "DECIMAL":
        ok = isinstance(value, (Decimal, numbers.Integral)) and not isinstance(value, bool)
        if ok:
            value = Decimal(int(value)) if isinstance(value, numbers.Integral) else value
            _, digits, exp = value.as_tuple()
            frac = max(0, -exp) if isinstance(exp, int) else 0
            # Rounding a longer fraction, or a value too wide, as Flink does is not reproduced.
            ok = value.is_finite() and frac <= t.scale and len(digits) - frac <= (
                t.precision - t.scale)
            marker = VALUE_REFUSED
    elif t.name == "STRING":
        ok = isinstance(value, str)
    elif t.name == "BOOLEAN":
        ok = isinstance(value, bool)
    if not ok:
        raise UdfFailed(f"{marker}the function {name} returned {value!r} "
                        f"({type(value).__name__}) for its {t.sql()} result")
    return value


def _failed(name: str, e: Exception, args: tuple) -> UdfFailed:
    shown = ", ".join(repr(a) for a in args)
    return UdfFailed(f"{DATA_ERROR}the function {name} raised {type(e).__name__}: {e} "
                     f"(arguments: {shown[:200]})")


class RowCall:
    """A scalar UDF called once per row."""

    def __init__(self, name: str, func: Callable, result: FlinkType):
        self.name, self.func, self.result = name, func, result
        self.__name__ = name  # Spark names the UDF by it

    def __call__(self, data, *args):  # no type hints: Spark would read them as Arrow's
        if not data:
            return None
        try:
            value = self.func(*args)
        except Exception as e:  # noqa: BLE001 - any exception of the user's is the run's error
            raise _failed(self.name, e, args) from None
        return checked(self.name, self.result, value)


class TryCall:
    """A scalar UDF's test run on a row (reject mode, udf/rejects.py): why the function fails
    on the row (the message its call would fail the run with), or None where it does not."""

    def __init__(self, call: RowCall):
        self.call = call
        self.__name__ = f"try_{call.name}"

    def __call__(self, data, *args):  # no type hints: Spark would read them as Arrow's
        try:
            self.call(data, *args)
        except UdfFailed as e:
            return str(e).removeprefix(DATA_ERROR).removeprefix(VALUE_REFUSED)
        return None


class TableCall:
    """A table function (``@udtf``): its rows for one input row, each a tuple (or one value)
    of the declared columns; a marker row passes as one row of NULLs."""

    def __init__(self, name: str, func: Callable, columns: tuple[FlinkType, ...]):
        self.name, self.func, self.columns = name, func, columns
        self.__name__ = name

    def __call__(self, data, *args):  # no type hints: Spark would read them as Arrow's
        if not data:
            return [(None,) * len(self.columns)]
        try:
            return [self._row(r) for r in (self.func(*args) or ())]
        except UdfFailed:
            raise
        except Exception as e:  # noqa: BLE001 - any exception of the user's is the run's error
            raise _failed(self.name, e, args) from None

    def _row(self, row: object) -> tuple:
        values = tuple(row) if isinstance(row, (tuple, list)) else (row,)
        if len(values) != len(self.columns):
            raise UdfFailed(f"{DATA_ERROR}the function {self.name} gave a row of "
                            f"{len(values)} values, not of the {len(self.columns)} it declares")
        return tuple(checked(self.name, t, v) for t, v in zip(self.columns, values))


class BatchCall:
    """A vectorized scalar UDF (``func_type="pandas"``): pandas Series in, a Series out."""

    def __init__(self, name: str, func: Callable, result: FlinkType):
        self.name, self.func, self.result = name, func, result
        self.__name__ = name

    def __call__(self, data: pd.Series, *cols: pd.Series) -> pd.Series:
        rows = data.fillna(False).astype(bool).to_numpy()
        if not rows.all():  # the function sees the data rows only, as a Series of their own
            result = pd.Series([None] * len(data), dtype=object)
            if rows.any():
                result[rows] = self(pd.Series(True, index=range(int(rows.sum()))),
                                    *[c[rows].reset_index(drop=True) for c in cols]).to_numpy()
            return result
        try:
            out = self.func(*cols)
        except Exception as e:  # noqa: BLE001 - any exception of the user's is the run's error
            raise _failed(self.name, e, tuple(c.iloc[:3].tolist() for c in cols)) from None
        n = len(data)
        values = list(out) if isinstance(out, (pd.Series, list, tuple)) or hasattr(
            out, "__len__") else None
        if values is None or len(values) != n:
            raise UdfFailed(f"{DATA_ERROR}the function {self.name} returned "
                            f"{len(values) if values is not None else type(out).__name__} "
                            f"values for {n} rows (a vectorized function returns one value "
                            "per row)")
        # pandas holds a NULL of a numeric Series as NaN (and Arrow, in Flink and Spark, reads
        # a NaN back as NULL)
        return pd.Series([None if v is None or (isinstance(v, float) and v != v)
                          else checked(self.name, self.result, v) for v in values], dtype=object)


def vectorized(call: BatchCall) -> Callable[..., pd.Series]:
    """``call`` with the type hints by which Spark knows a Series-to-Series pandas UDF."""
    def series(*cols: pd.Series) -> pd.Series:
        return call(*cols)
    return series
