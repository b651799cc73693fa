"""Flink SQL column types: parsing from DDL, the Spark type that stores them, and CSV rendering."""

from __future__ import annotations

import decimal
import math
import re
from dataclasses import dataclass

from pyspark.sql import types as T

_INTEGRAL = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}
_ALIASES = {"INTEGER": "INT", "REAL": "FLOAT", "NUMERIC": "DECIMAL", "DEC": "DECIMAL",
            "VARCHAR": "STRING", "CHAR": "STRING", "TEXT": "STRING", "DOUBLE PRECISION": "DOUBLE"}
_TYPE_RE = re.compile(
    r"^\s*([A-Za-z_ ]+?)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?\s*(NOT\s+NULL)?\s*$",
    re.IGNORECASE)


@dataclass(frozen=True)
class FlinkType:
    """A Flink logical type. ``precision``/``scale`` are used by DECIMAL and TIMESTAMP."""

    name: str
    precision: int | None = None
    scale: int | None = None

    @staticmethod
    def parse(text: str) -> FlinkType:
        """Parse a DDL type (``INT``, ``DECIMAL(10, 2)``, ``TIMESTAMP(3)``, ``VARCHAR``...)."""
        m = _TYPE_RE.match(text)
        if not m:
            raise ValueError(f"unsupported column type {text.strip()!r}")
        name = " ".join(m.group(1).upper().split())
        name = _ALIASES.get(name, name)
        p = int(m.group(2)) if m.group(2) else None
        s = int(m.group(3)) if m.group(3) else None
        if name in _INTEGRAL or name in ("FLOAT", "DOUBLE", "BOOLEAN", "STRING", "DATE"):
            return FlinkType(name)
        if name == "DECIMAL":
            return FlinkType(name, 10 if p is None else p, 0 if s is None else s)
        if name == "TIMESTAMP":
            return FlinkType(name, 6 if p is None else p)
        raise ValueError(f"unsupported column type {text.strip()!r}")

    @property
    def is_integral(self) -> bool:
        return self.name in _INTEGRAL

    @property
    def is_floating(self) -> bool:
        return self.name in ("FLOAT", "DOUBLE")

    @property
    def is_numeric(self) -> bool:
        return self.is_integral or self.is_floating or self.name == "DECIMAL"

    def integral_bits(self) -> int:
        return _INTEGRAL[self.name]

    def spark(self) -> T.DataType:
        """The Spark type that stores this Flink type (timestamps as UTC instants)."""
        return {
            "TINYINT": T.ByteType(), "SMALLINT": T.ShortType(), "INT": T.IntegerType(),
            "BIGINT": T.LongType(), "FLOAT": T.FloatType(), "DOUBLE": T.DoubleType(),
            "BOOLEAN": T.BooleanType(), "STRING": T.StringType(), "DATE": T.DateType(),
            "TIMESTAMP": T.TimestampType(),
        }.get(self.name) or T.DecimalType(self.precision, self.scale)

    @staticmethod
    def from_spark(dt: T.DataType) -> FlinkType:
        """The Flink type of a Spark expression result (used for derived columns)."""
        if isinstance(dt, T.DecimalType):
            return FlinkType("DECIMAL", dt.precision, dt.scale)
        if isinstance(dt, (T.TimestampType, T.TimestampNTZType)):
            return FlinkType("TIMESTAMP", 3)
        for name in ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "BOOLEAN",
                     "STRING", "DATE"):
            if FlinkType(name).spark() == dt:
                return FlinkType(name)
        raise ValueError(f"no Flink type for Spark type {dt.simpleString()}")

    def sql(self) -> str:
        if self.name == "DECIMAL":
            return f"DECIMAL({self.precision}, {self.scale})"
        if self.name == "TIMESTAMP":
            return f"TIMESTAMP({self.precision})"
        return self.name


def java_double(x: float) -> str:
    """Render a double the way Flink (Java's ``Double.toString``) does: ``20.0``, ``1.0E7``."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0 or 1e-3 <= abs(x) < 1e7:
        return repr(float(x))
    sign, digits, exp = decimal.Decimal(repr(float(x))).normalize().as_tuple()
    text = "".join(map(str, digits))
    return f"{'-' if sign else ''}{text[0]}.{text[1:] or '0'}E{len(text) - 1 + exp}"
