"""Flink's ``csv`` and ``json`` formats as its filesystem sink writes them: one line per row,
rendered by Spark column expressions on the executors (no Python per row). Checked with real
Flink writing the same rows (tests/cases/sinks, tests/oracle/sink_expected.py):

- numbers: integers as they are; DOUBLE and FLOAT as Java prints them (``20.0``, ``1.0E-5``,
  Spark's cast does the same); a DECIMAL as Java's ``stripTrailingZeros().toString()``
  (``1.50`` -> ``1.5``, ``100.00`` -> ``1E+2``, ``0.00`` -> ``0``); BOOLEAN ``true``/``false``;
- DATE ``yyyy-MM-dd``; TIME ``HH:mm:ss``; TIMESTAMP ``yyyy-MM-dd HH:mm:ss[.f]`` with the
  fraction's trailing zeros cut (Spark's cast cuts them alike), TIMESTAMP_LTZ the same in UTC
  with a ``Z``; JSON's ``json.timestamp-format.standard`` = ``ISO-8601``: a ``T`` for the space;
- csv: no header, fields by position, NULL as ``csv.null-literal`` (default empty, as is an
  empty string), a text value (STRING, DATE, TIME, timestamps) quoted when it holds a
  character below ``max(delimiter, quote, newline) + 1`` (Jackson's loose quoting: with
  ``,`` a space or a ``#`` quotes it, with ``|`` almost any text does), the quote doubled;
  never quoted with ``csv.disable-quote-character``;
- json: one object per line, every column in order (NULL as ``null``), strings escaped as
  Jackson escapes them (Spark's ``to_json`` is Jackson too), a DOUBLE's NaN or infinity as the
  string ``"NaN"``, ``"Infinity"``.
"""

from __future__ import annotations

import json

from pyspark.sql import Column
from pyspark.sql import functions as F

from operators_lib.sql.connectors import unescape
from operators_lib.types import FlinkType


def csv_line(columns: list[tuple[str, FlinkType]], options: dict[str, str]) -> Column:
    """A row's line (without its newline) in Flink's csv format with the WITH ``options``."""
    delimiter = unescape(options.get("csv.field-delimiter", ","))
    quote = None if options.get("csv.disable-quote-character", "false").lower() == "true" \
        else unescape(options.get("csv.quote-character", '"'))
    null = options.get("csv.null-literal", "")
    # Jackson quotes a text holding a character up to the greatest of these
    top = max(ord(delimiter), ord(quote or "\0"), ord("\n"))
    below = f"[\\x00-\\x{top:02x}]"
    fields = []
    for name, t in columns:
        text = _text(F.col(f"`{name}`"), t, iso=False)
        if quote is not None and not (t.is_numeric or t.name == "BOOLEAN"):
            text = F.when(text.rlike(below), F.concat(
                F.lit(quote), F.replace(text, F.lit(quote), F.lit(quote * 2)), F.lit(quote))
            ).otherwise(text)
        fields.append(F.coalesce(text, F.lit(null)))
    return F.concat_ws(delimiter, *fields)


def json_line(columns: list[tuple[str, FlinkType]], options: dict[str, str]) -> Column:
    """A row's line (without its newline) in Flink's json format with the WITH ``options``."""
    iso = options.get("json.timestamp-format.standard", "SQL") == "ISO-8601"
    parts = []
    for name, t in columns:
        c = F.col(f"`{name}`")
        if t.is_numeric and t.name != "DECIMAL":
            value = _text(c, t, iso)
            if t.is_floating:  # Jackson writes a NaN or an infinity as a string
                value = F.when(F.isnan(c) | (F.abs(c) == float("inf")),
                               F.concat(F.lit('"'), value, F.lit('"'))).otherwise(value)
        elif t.name in ("DECIMAL", "BOOLEAN"):
            value = _text(c, t, iso)
        else:
            value = _json_string(_text(c, t, iso))
        parts.append(F.concat(F.lit(_json_string_literal(name) + ":"),
                              F.coalesce(value, F.lit("null"))))
    return F.concat(F.lit("{"), F.concat_ws(",", *parts), F.lit("}"))


def _text(c: Column, t: FlinkType, iso: bool) -> Column:
    """A value's text as Flink's csv and json formats write it (NULL stays NULL)."""
    if t.name == "DECIMAL":
        return decimal_text(c)
    if t.name == "TIME":
        return F.substring(c.cast("string"), 1, 8)
    if t.is_timestamp:
        text = c.cast("string")  # the fraction's trailing zeros cut
        if iso:
            text = F.replace(text, F.lit(" "), F.lit("T"))
        return F.concat(text, F.lit("Z")) if t.name == "TIMESTAMP_LTZ" else text
    return c.cast("string")


def decimal_text(c: Column) -> Column:
    """Java's ``BigDecimal.stripTrailingZeros().toString()`` of a decimal column: plain digits
    but where the stripped value has a negative scale (``1E+2``) or an adjusted exponent below
    -6 (``1.2E-7``): then the digits with a point after the first, ``E`` and the exponent."""
    plain = F.regexp_replace(F.abs(c).cast("string"), r"(\.\d*?)0+$", "$1")
    plain = F.regexp_replace(plain, r"\.$", "")
    sign = F.when(c < 0, F.lit("-")).otherwise(F.lit(""))
    whole = F.split(plain, r"\.").getItem(0)
    fraction = F.coalesce(F.get(F.split(plain, r"\."), 1), F.lit(""))

    def scientific(digits: Column, exponent: Column) -> Column:
        mantissa = F.when(F.length(digits) > 1, F.concat(
            F.substring(digits, 1, 1), F.lit("."), F.substring(digits, 2, 1 << 20))
        ).otherwise(digits)
        return F.concat(mantissa, F.lit("E"), exponent)

    trailing = F.length(whole) - F.length(F.regexp_replace(whole, "0+$", ""))
    big = scientific(F.regexp_replace(whole, "0+$", ""),
                     F.concat(F.lit("+"), (F.length(whole) - 1).cast("string")))
    leading = F.length(fraction) - F.length(F.regexp_replace(fraction, "^0+", ""))
    small = scientific(F.regexp_replace(fraction, "^0+", ""),
                       F.concat(F.lit("-"), (leading + 1).cast("string")))
    text = F.when(plain == "0", F.lit("0")) \
        .when((fraction == "") & (trailing > 0), big) \
        .when((whole == "0") & (leading >= 6), small) \
        .otherwise(plain)
    return F.when(c.isNotNull(), F.concat(F.when(plain == "0", F.lit("")).otherwise(sign), text))


def _json_string(text: Column) -> Column:
    """``text`` as a JSON string, escaped by Jackson (Spark's ``to_json`` of a one-element
    array, its brackets cut)."""
    quoted = F.to_json(F.array(text))
    return F.when(text.isNotNull(), F.substring(quoted, F.lit(2), F.length(quoted) - 2))


def _json_string_literal(name: str) -> str:
    return json.dumps(name, ensure_ascii=False)
