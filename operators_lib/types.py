"""Flink SQL column types: parsing from DDL and the Spark type that stores them."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pyspark.sql import types as T

_INTEGRAL = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}
_ALIASES = {"INTEGER": "INT", "REAL": "FLOAT", "NUMERIC": "DECIMAL", "DEC": "DECIMAL",
            "VARCHAR": "STRING", "CHAR": "STRING", "TEXT": "STRING", "DOUBLE PRECISION": "DOUBLE",
            "TIMESTAMP WITHOUT TIME ZONE": "TIMESTAMP", "TIME WITHOUT TIME ZONE": "TIME",
            "TIMESTAMP WITH LOCAL TIME ZONE": "TIMESTAMP_LTZ"}
# Fraction digits twinflow holds: microseconds in Spark's timestamps; milliseconds in Flink's
# TIME (its runtime keeps a TIME as milliseconds of the day).
_MAX_PRECISION = {"TIMESTAMP": 6, "TIMESTAMP_LTZ": 6, "TIME": 3}
_DEFAULT_PRECISION = {"TIMESTAMP": 6, "TIMESTAMP_LTZ": 6, "TIME": 0}
# Nested types come from constructors (ARRAY[..], MAP[..], ROW(..)); no table column has one.
NESTED = ("ARRAY", "MAP", "ROW")
_TYPE_RE = re.compile(
    r"^\s*([A-Za-z_ ]+?)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?"
    r"\s*((?:WITH(?:OUT)?\s+(?:LOCAL\s+)?TIME\s+ZONE)?)\s*(NOT\s+NULL)?\s*$",
    re.IGNORECASE)


@dataclass(frozen=True)
class FlinkType:
    """A Flink logical type. ``precision``/``scale`` are used by DECIMAL, ``precision`` by TIME,
    TIMESTAMP and TIMESTAMP_LTZ (fraction digits); ``args`` are the element type of an ARRAY,
    the key and value types of a MAP, the field types of a ROW."""

    name: str
    precision: int | None = None
    scale: int | None = None
    args: tuple[FlinkType, ...] = ()

    @staticmethod
    def parse(text: str) -> FlinkType:
        """Parse a DDL type (``INT``, ``DECIMAL(10, 2)``, ``TIMESTAMP(3)``, ``VARCHAR``...)."""
        m = _TYPE_RE.match(text)
        if not m:
            raise ValueError(f"unsupported column type {text.strip()!r}")
        name = " ".join(m.group(1).upper().split())
        if m.group(4):
            name = f"{name} {' '.join(m.group(4).upper().split())}"
        name = _ALIASES.get(name, name)
        p = int(m.group(2)) if m.group(2) else None
        s = int(m.group(3)) if m.group(3) else None
        if name in _INTEGRAL or name in ("FLOAT", "DOUBLE", "BOOLEAN", "STRING", "DATE"):
            return FlinkType(name)
        if name == "DECIMAL":
            return FlinkType(name, 10 if p is None else p, 0 if s is None else s)
        if name in _MAX_PRECISION and s is None:
            p = _DEFAULT_PRECISION[name] if p is None else p
            if p > _MAX_PRECISION[name]:
                raise ValueError(f"{name}({p}) is not supported (twinflow holds at most "
                                 f"{_MAX_PRECISION[name]} fraction digits in a {name})")
            return FlinkType(name, p)
        raise ValueError(f"unsupported column type {text.strip()!r}")

    @property
    def is_timestamp(self) -> bool:
        """TIMESTAMP or TIMESTAMP_LTZ (in twinflow's UTC session both read alike)."""
        return self.name in ("TIMESTAMP", "TIMESTAMP_LTZ")

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
        """The Spark type that stores this Flink type: TIMESTAMP and TIMESTAMP_LTZ as a UTC
        instant (the session time zone is UTC, in which both read and compute alike: a
        declared column keeps its Flink type, a computed one is a TIMESTAMP(3)), TIME as a
        Spark TIME(p)."""
        if self.name == "TIME":
            return T.TimeType(self.precision)
        if self.name == "ARRAY":
            return T.ArrayType(self.args[0].spark())
        if self.name == "MAP":
            return T.MapType(self.args[0].spark(), self.args[1].spark())
        if self.name == "ROW":
            return T.StructType([T.StructField(f"f{i}", a.spark())
                                 for i, a in enumerate(self.args)])
        return {
            "TINYINT": T.ByteType(), "SMALLINT": T.ShortType(), "INT": T.IntegerType(),
            "BIGINT": T.LongType(), "FLOAT": T.FloatType(), "DOUBLE": T.DoubleType(),
            "BOOLEAN": T.BooleanType(), "STRING": T.StringType(), "DATE": T.DateType(),
            "TIMESTAMP": T.TimestampType(), "TIMESTAMP_LTZ": T.TimestampType(),
        }.get(self.name) or T.DecimalType(self.precision, self.scale)

    @staticmethod
    def from_spark(dt: T.DataType) -> FlinkType:
        """The Flink type of a Spark expression result (used for derived columns)."""
        if isinstance(dt, T.DecimalType):
            return FlinkType("DECIMAL", dt.precision, dt.scale)
        if isinstance(dt, T.TimestampType):
            return FlinkType("TIMESTAMP", 3)
        if isinstance(dt, T.TimeType):
            return FlinkType("TIME", dt.precision)
        if isinstance(dt, T.ArrayType):
            return FlinkType("ARRAY", args=(FlinkType.from_spark(dt.elementType),))
        if isinstance(dt, T.MapType):
            return FlinkType("MAP", args=(FlinkType.from_spark(dt.keyType),
                                          FlinkType.from_spark(dt.valueType)))
        if isinstance(dt, T.StructType):
            return FlinkType("ROW", args=tuple(FlinkType.from_spark(f.dataType)
                                               for f in dt.fields))
        for name in ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "BOOLEAN",
                     "STRING", "DATE"):
            if FlinkType(name).spark() == dt:
                return FlinkType(name)
        raise ValueError(f"no Flink type for Spark type {dt.simpleString()}")

    def sql(self) -> str:
        if self.name == "DECIMAL":
            return f"DECIMAL({self.precision}, {self.scale})"
        if self.name in _MAX_PRECISION:
            return f"{self.name}({self.precision})"
        if self.name == "ARRAY":
            return f"ARRAY<{self.args[0].sql()}>"
        if self.name == "MAP":
            return f"MAP<{self.args[0].sql()}, {self.args[1].sql()}>"
        if self.name == "ROW":
            return f"ROW<{', '.join(f'f{i} {a.sql()}' for i, a in enumerate(self.args))}>"
        return self.name

