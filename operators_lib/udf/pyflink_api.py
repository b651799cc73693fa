"""The part of PyFlink's API a UDF module uses, so that the module Flink runs runs unchanged in
twinflow: ``from pyflink.table import DataTypes`` and ``from pyflink.table.udf import udf,
udtf, ScalarFunction, TableFunction``.

twinflow's environment has no PyFlink (its pinned pandas and pyarrow conflict with Spark's), so
``install()`` registers this module as ``pyflink``, ``pyflink.table`` and
``pyflink.table.udf`` where no real PyFlink is importable: on the driver before a UDF module
is imported, and on each executor before a UDF is unpickled (udf/calls.py imports this module).
The decorators record what twinflow needs (the function, its declared types, vectorized or
not); a type is kept as its Flink SQL text.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class DataType:
    """A Flink type by its SQL text (``BIGINT``, ``DECIMAL(10, 2)``, ``ROW<a INT>``)."""

    sql: str

    def not_null(self) -> DataType:
        return self  # twinflow checks a UDF's results for NULL where Flink does not either

    def nullable(self) -> DataType:
        return self


def _simple(name: str) -> Callable[..., DataType]:
    return lambda nullable=True: DataType(name)


class DataTypes:
    TINYINT = staticmethod(_simple("TINYINT"))
    SMALLINT = staticmethod(_simple("SMALLINT"))
    INT = staticmethod(_simple("INT"))
    BIGINT = staticmethod(_simple("BIGINT"))
    FLOAT = staticmethod(_simple("FLOAT"))
    DOUBLE = staticmethod(_simple("DOUBLE"))
    BOOLEAN = staticmethod(_simple("BOOLEAN"))
    STRING = staticmethod(_simple("STRING"))
    DATE = staticmethod(_simple("DATE"))
    BYTES = staticmethod(_simple("BYTES"))

    @staticmethod
    def VARCHAR(length: int = 2147483647, nullable: bool = True) -> DataType:  # noqa: N802
        return DataType("STRING" if length == 2147483647 else f"VARCHAR({length})")

    @staticmethod
    def CHAR(length: int = 1, nullable: bool = True) -> DataType:  # noqa: N802
        return DataType(f"CHAR({length})")

    @staticmethod
    def DECIMAL(precision: int, scale: int, nullable: bool = True) -> DataType:  # noqa: N802
        return DataType(f"DECIMAL({precision}, {scale})")

    @staticmethod
    def TIMESTAMP(precision: int = 6, nullable: bool = True) -> DataType:  # noqa: N802
        return DataType(f"TIMESTAMP({precision})")

    @staticmethod
    def ARRAY(element: DataType, nullable: bool = True) -> DataType:  # noqa: N802
        return DataType(f"ARRAY<{element.sql}>")

    @staticmethod
    def FIELD(name: str, data_type: DataType, description: str | None = None  # noqa: N802
              ) -> tuple[str, DataType]:
        return name, data_type

    @staticmethod
    def ROW(fields: list[tuple[str, DataType]], nullable: bool = True) -> DataType:  # noqa: N802
        return DataType(f"ROW<{', '.join(f'`{n}` {t.sql}' for n, t in fields)}>")


class ScalarFunction:
    """A class-based scalar function: twinflow calls its ``eval``."""

    def open(self, function_context: object) -> None:
        pass

    def close(self) -> None:
        pass


class TableFunction(ScalarFunction):
    """A class-based table function: its ``eval`` yields the rows."""


@dataclass(frozen=True)
class Declared:
    """What a ``@udf`` / ``@udtf`` decorator declared."""

    func: Callable
    kind: str  # "scalar" | "table"
    result_types: tuple[str, ...]  # Flink SQL type texts (a table function: one per column)
    input_types: tuple[str, ...] | None
    vectorized: bool  # func_type="pandas": pandas Series in, a Series out
    deterministic: bool
    name: str | None

    def __call__(self, *args):  # PyFlink's wrapper is callable too (in the module's own tests)
        return self.func(*args)


def _texts(types_: object) -> tuple[str, ...] | None:
    if types_ is None:
        return None
    items = types_ if isinstance(types_, (list, tuple)) else [types_]
    return tuple(t.sql if isinstance(t, DataType) else str(t) for t in items)


def _declare(kind: str, f, input_types, result_types, deterministic, name,
             func_type: str) -> Declared | Callable[[Callable], Declared]:
    def wrap(fn) -> Declared:
        func = fn.eval if isinstance(fn, ScalarFunction) else fn
        return Declared(func, kind, _texts(result_types) or (), _texts(input_types),
                        func_type == "pandas", deterministic is not False, name)
    return wrap if f is None else wrap(f)


def udf(f=None, input_types=None, result_type=None, deterministic=None, name=None,
        func_type: str = "general", udf_type=None):
    """PyFlink's ``udf``: a scalar function (``func_type="pandas"``: vectorized)."""
    return _declare("scalar", f, input_types, result_type, deterministic, name,
                    udf_type or func_type)


def udtf(f=None, input_types=None, result_types=None, deterministic=None, name=None,
         func_type: str = "general"):
    """PyFlink's ``udtf``: a table function yielding rows (a tuple, or one value)."""
    return _declare("table", f, input_types, result_types, deterministic, name, func_type)


def install() -> None:
    """Make ``import pyflink.table[.udf]`` find this module, unless PyFlink itself is there."""
    if "pyflink" in sys.modules or importlib.util.find_spec("pyflink") is not None:
        return
    this = sys.modules[__name__]
    root = types.ModuleType("pyflink")
    root.__path__ = []  # a package, so that ``pyflink.table`` imports
    root.table = this
    sys.modules["pyflink"] = root
    sys.modules["pyflink.table"] = this
    sys.modules["pyflink.table.udf"] = this
