"""Flink's ``json`` format (a WITH-bound table): one JSON object per line.

The rules, as Flink 2.3 reads a line (Jackson, Flink's converters; checked with the oracle:
tests/cases/sources/):

- fields by name, case-sensitive; a missing field or ``null`` is NULL
  (``json.fail-on-missing-field``: a missing one is an error); other fields are ignored;
- an INT / BIGINT takes a number in its range (a fraction is cut: 1.7 is 1) or a string of an
  integer; TINYINT / SMALLINT a plain integer or such a string; FLOAT / DOUBLE a number or a
  string Java's ``parseDouble`` reads; a DECIMAL a number or a decimal string, NULL if too
  large for its type; a BOOLEAN is ``true``, or a string ``true`` in any case (anything else:
  FALSE); a STRING takes a string, and any other value as its JSON text;
- a TIMESTAMP is ``yyyy-MM-dd HH:mm:ss[.f]`` (``json.timestamp-format.standard`` =
  ``ISO-8601``: a ``T`` between), a TIMESTAMP_LTZ the same ending in ``Z``, cut to the type's
  fraction digits; a DATE ``yyyy-MM-dd``; a TIME ``HH:mm:ss[.f]``;
- a line that is not a JSON object is an error, an empty line is skipped;
- ``json.ignore-parse-errors``: a field that does not convert is NULL; a line that is not an
  object is dropped.

A line Flink fails the job on is a rejected row here (rejected.csv: file, line, reason), and so
is one whose event time is NULL; a line Flink drops under ``json.ignore-parse-errors`` too.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

import pyarrow as pa

from operators_lib.catalog import TableDef
from operators_lib.io.csv_parse import (
    FLOAT_RE,
    Rejected,
    arrow_type,
    java_double,
    physical_schema,
)
from operators_lib.io.formats import Format
from operators_lib.types import FlinkType

_INT = re.compile(r"[+-]?\d+")
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_DATE = r"(\d{4})-(\d{2})-(\d{2})"
_TIME = r"(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?"
_INT_RANGE = {"INT": 31, "BIGINT": 63}


class _Invalid(ValueError):
    pass


def records(table: TableDef, fmt: Format, data: bytes, first_line: int
            ) -> tuple[pa.Table, list[Rejected]]:
    """The typed rows of a piece that starts at line ``first_line``, and its rejected rows."""
    ignore = fmt.flag("json.ignore-parse-errors")
    required = fmt.flag("json.fail-on-missing-field")
    iso = fmt.option("json.timestamp-format.standard", "SQL") == "ISO-8601"
    decimals = any(c.type.name == "DECIMAL" for c in table.physical)
    rowtime = table.watermark.column if table.watermark else None
    columns: dict[str, list] = {c.name: [] for c in table.physical}
    rejected = []
    for offset, raw in enumerate(data.split(b"\n")):
        line = first_line + offset
        text = raw.decode("utf-8", "surrogateescape").rstrip("\r")
        if not text.strip():
            continue
        try:
            if re.search("[\udc80-\udcff]", text):
                raise _Invalid("invalid UTF-8")
            obj = json.loads(text, parse_float=Decimal, parse_constant=_no_constant)
            if not isinstance(obj, dict):
                raise _Invalid("not a JSON object")
        except (_Invalid, ValueError) as e:
            reason = str(e) if isinstance(e, _Invalid) else f"not JSON: {e}"
            if ignore:
                reason += " (dropped, as Flink drops it under json.ignore-parse-errors)"
            rejected.append(Rejected(line, reason, _shown(text)))
            continue
        row, reason = [], ""
        for c in table.physical:
            if c.name not in obj and required:
                reason = f"field {c.name} is missing (json.fail-on-missing-field)"
                break
            value = obj.get(c.name)
            try:
                value = None if value is None else _value(value, c.type, iso, decimals)
            except (_Invalid, ValueError, InvalidOperation, ArithmeticError):
                if not ignore:
                    reason = f"column {c.name}: {_json_text(value, decimals)!r} is not a " \
                             f"valid {c.type.sql()}"
                    break
                value = None
            if value is None and c.name == rowtime:
                reason = f"column {c.name}: NULL in the event-time (WATERMARK) column"
                break
            row.append(value)
        if reason:
            rejected.append(Rejected(line, reason, _shown(text)))
            continue
        for c, value in zip(table.physical, row):
            columns[c.name].append(value)
    good = pa.table({c.name: pa.array(columns[c.name], _arrow(c.type))
                     for c in table.physical}).cast(physical_schema(table))
    return good, rejected


def _no_constant(name: str) -> None:
    raise _Invalid(f"{name} is not JSON")


def _shown(text: str) -> str:
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _arrow(t: FlinkType) -> pa.DataType:
    """The Arrow type of the Python values ``_value`` gives (cast to the staged type after)."""
    return pa.timestamp("us") if t.is_timestamp else arrow_type(t)


def _value(v, t: FlinkType, iso: bool, decimals: bool):
    """A JSON value as column type ``t`` (module docstring); _Invalid or ValueError if it does
    not convert."""
    name = t.name
    if name == "STRING":
        return v if isinstance(v, str) else _json_text(v, decimals)
    if name == "BOOLEAN":
        return v if isinstance(v, bool) else (
            isinstance(v, str) and v.strip().lower() == "true")
    if t.is_integral:
        bits = t.integral_bits() - 1
        if isinstance(v, bool):
            raise _Invalid("a boolean")
        if name in _INT_RANGE and isinstance(v, int | Decimal) and -2 ** bits <= v < 2 ** bits:
            return int(v)  # Jackson's canConvertToInt / intValue: a fraction is cut
        text = v.strip() if isinstance(v, str) else _json_text(v, decimals)
        if not _INT.fullmatch(text) or not -2 ** bits <= int(text) < 2 ** bits:
            raise _Invalid(text)
        return int(text)
    if t.is_floating:
        if isinstance(v, bool) or not isinstance(v, int | Decimal | str):
            raise _Invalid("not a number")
        if isinstance(v, str):
            text = v.strip("".join(map(chr, range(33))))
            if not re.fullmatch(FLOAT_RE, text):
                raise _Invalid(text)
            return java_double(text)
        return float(v)
    if name == "DECIMAL":
        if isinstance(v, bool) or not isinstance(v, int | Decimal | str):
            raise _Invalid("not a number")
        text = v if isinstance(v, str) else str(v)
        if not _DECIMAL.fullmatch(text):
            raise _Invalid(text)
        d = Decimal(text).quantize(Decimal(1).scaleb(-t.scale), rounding=ROUND_HALF_UP)
        return None if abs(d) >= Decimal(10) ** (t.precision - t.scale) else d
    if not isinstance(v, str):
        raise _Invalid("not a string")
    if name == "DATE":
        m = re.fullmatch(_DATE, v)
        if not m:
            raise _Invalid(v)
        return dt.date(*map(int, m.groups()))
    if name == "TIME":
        m = re.fullmatch(_TIME, v)
        if not m:
            raise _Invalid(v)
        return _time(m.groups(), t.precision)
    zone = "Z" if name == "TIMESTAMP_LTZ" else ""
    m = re.fullmatch(_DATE + ("T" if iso else " ") + _TIME + zone, v)
    if not m:
        raise _Invalid(v)
    day = dt.date(*map(int, m.groups()[:3]))
    return dt.datetime.combine(day, _time(m.groups()[3:], t.precision))


def _time(parts: tuple, precision: int) -> dt.time:
    h, m, s, fraction = parts
    micros = int((fraction or "").ljust(6, "0")[:6])
    unit = 10 ** (6 - min(precision, 6))
    return dt.time(int(h), int(m), int(s), micros // unit * unit)


def _json_text(v, decimals: bool) -> str:
    """A JSON value's text as Jackson prints it (a STRING column's value of a non-string)."""
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, Decimal):
        return str(v) if decimals else _java_double_text(float(v))
    if isinstance(v, int):
        return str(v)
    if isinstance(v, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{_json_text_nested(x, decimals)}"
                              for k, x in v.items()) + "}"
    return "[" + ",".join(_json_text_nested(x, decimals) for x in v) + "]"


def _json_text_nested(v, decimals: bool) -> str:
    if v is None:
        return "null"
    return json.dumps(v) if isinstance(v, str) else _json_text(v, decimals)


def _java_double_text(x: float) -> str:
    """Java's ``Double.toString``: plain from 10^-3 to 10^7, else ``d.dddE[-]n``."""
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0 or 1e-3 <= abs(x) < 1e7:
        text = repr(x)
        return text if "." in text else text + ".0"
    sign, digits, exponent = Decimal(repr(x)).normalize().as_tuple()
    text = "".join(map(str, digits))
    return f"{'-' if sign else ''}{text[0]}.{text[1:] or '0'}E{len(digits) + exponent - 1}"
