"""PRINTF(format, args..) as Flink 2.3 runs it (PrintfFunction): java.util.Formatter with
Locale.US over the arguments' internal values, NULL when the format is NULL or the Formatter
throws. Spark's format_string is the same Formatter over its own values; they print alike
for strings, integers, FLOAT, DOUBLE and BOOLEAN (a NULL as ``null``). A DECIMAL prints as its
plain text (Flink's DecimalData) and a timestamp as Java's LocalDateTime (TimestampData), so
both are passed as that text. The format is a literal, checked by Java when planning: where
it throws (a bad flag, a missing argument) Flink's result is always NULL; a conversion that
does not take an argument's type (%d of a STRING, %f of a DECIMAL) throws only on a value, so
the result is NULL where that argument is not NULL.
"""

from __future__ import annotations

import re

from sqlglot import exp

from operators_lib.sql.functions.base import Call, Function, _string
from operators_lib.sql.functions.strings import _spark_string
from operators_lib.types import FlinkType

# java.util.Formatter's format specifier.
_SPEC = re.compile(r"%(\d+\$)?([-#+ 0,(<]*)?(\d+)?(\.\d+)?([tT])?([a-zA-Z%])")
_INTEGRAL = set("doxX")
_FLOATING = set("eEfgGaA")
_ANY = set("sSbB")


def _takes(conversion: str, t: FlinkType) -> bool:
    """Does Java's conversion take a value of ``t`` (as Flink passes it)?"""
    return conversion in _ANY or conversion in _INTEGRAL and t.is_integral or (
        conversion in _FLOATING and t.is_floating)


def _argument(c: Call, i: int) -> tuple[str, object]:
    """(argument ``i`` as Spark passes it to the Formatter, a sample of that Java value)."""
    t, x = c.type(i), c.sql[i]
    if t.is_integral:
        return x, 1 << 40 if t.name == "BIGINT" else 1
    if t.is_floating:
        return x, 1.5
    if t.name == "BOOLEAN":
        return x, True
    if t.name == "STRING":
        return x, "x"
    if t.name == "DECIMAL":
        return f"CAST({x} AS STRING)", "x"
    if t.name in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return _local_date_time(x), "x"
    raise c.reject(f"PRINTF of a {t.sql()} is not supported (Flink formats its internal value)")


def _local_date_time(x: str) -> str:
    """Java's LocalDateTime.toString: seconds only when not zero (or a fraction is), the
    fraction in 3 or 6 digits."""
    micros = f"date_format({x}, 'SSSSSS')"
    fraction = (f"CASE WHEN {micros} = '000000' THEN '' WHEN {micros} LIKE '%000' THEN "
                f"concat('.', substr({micros}, 1, 3)) ELSE concat('.', {micros}) END")
    seconds = (f"IF(second({x}) = 0 AND {micros} = '000000', '', "
               f"concat(':', date_format({x}, 'ss'), {fraction}))")
    return f"concat(date_format({x}, \"yyyy-MM-dd'T'HH:mm\"), {seconds})"


def _printf(c: Call) -> str:
    fmt_node = c.args[0].this if isinstance(c.args[0], exp.Cast) else c.args[0]
    if isinstance(fmt_node, exp.Null):
        return "CAST(NULL AS STRING)"
    c.require(0, _string, "a string")
    fmt = c.string(0, "format")
    args = [_argument(c, i) for i in range(1, len(c.args))]
    types = [c.type(i) for i in range(1, len(c.args))]
    # Each argument a conversion uses, and whether it takes its type.
    mismatched, ordinary, last = set(), 0, None
    for m in _SPEC.finditer(fmt):
        index, flags, conversion = m.group(1), m.group(2) or "", m.group(6)
        if conversion in "%n":
            continue
        if index:
            last = int(index[:-1]) - 1
        elif "<" not in flags:
            last, ordinary = ordinary, ordinary + 1
        if last is None or not 0 <= last < len(args):
            continue  # Java throws: checked below
        if m.group(5) or conversion in "cChH":
            raise c.reject(f"PRINTF's %{m.group(5) or ''}{conversion} is not supported (twinflow "
                           "runs %s, %S, %b, %B, %d, %o, %x, %X, %e, %E, %f, %g, %G, %a, %A, %n "
                           "and %%)")
        if not _takes(conversion, types[last]):
            mismatched.add(last)
    samples = tuple(None if i in mismatched else s for i, (_, s) in enumerate(args))
    if c.env.format_error(fmt, samples) is not None:
        return "CAST(NULL AS STRING)"  # Java throws on every row
    text = f"format_string({', '.join([_spark_string(fmt), *(x for x, _ in args)])})"
    if not mismatched:
        return text
    values = " OR ".join(f"{c.sql[i + 1]} IS NOT NULL" for i in sorted(mismatched))
    return f"(CASE WHEN {values} THEN CAST(NULL AS STRING) ELSE {text} END)"


FUNCTIONS = [Function("PRINTF", 1, None, _printf)]
