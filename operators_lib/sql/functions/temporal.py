"""Time functions (the session time zone is UTC in twinflow and in the Flink reference)."""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlglot import exp

from operators_lib.sql.functions.base import (
    Call,
    Function,
    _string,
    _timestamp,
    value_refused,
)
from operators_lib.sql.functions.strings import _spark_string

# Pattern letters whose meaning and output are the same in Flink (java.time DateTimeFormatter)
# and Spark's datetime patterns; anything else in a pattern is refused.
_PATTERN_LETTERS = set("yMdHmsSEahkKD")


def _pattern(c: Call, i: int) -> str:
    pattern = c.string(i, "format")
    for m in re.finditer(r"'[^']*'|([A-Za-z])", pattern):
        if m.group(1) and m.group(1) not in _PATTERN_LETTERS:
            raise c.reject(f"{c.name}: pattern letter '{m.group(1)}' is not supported "
                           f"(supported: {' '.join(sorted(_PATTERN_LETTERS))})")
    return _spark_string(pattern)


def _date_format(c: Call) -> str:
    if c.type(0).name == "STRING":
        raise c.reject("DATE_FORMAT of a STRING is not supported; write "
                       "DATE_FORMAT(TO_TIMESTAMP(s), ..)")
    c.require(0, _timestamp, "a TIMESTAMP")
    return f"date_format({c.sql[0]}, {_pattern(c, 1)})"


# Flink's TO_TIMESTAMP(s) reads 'yyyy-M-d[ H:m:s[.fraction]]' and gives NULL for other text
# (checked: '2024', '2024-01', a 'T' or a zone, no seconds, surrounding blanks). Text of that
# shape Spark cannot read (2024-02-30, 24:00:00) Flink adjusts; twinflow fails the run there
# rather than guess.
_TS_SHAPE = r"^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}( [0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\\.[0-9]*)?)?$"


def _part(spark: str) -> Callable[[Call], str]:
    def render(c: Call) -> str:
        t = c.require(0, lambda t: t.is_timestamp or t.name == "DATE", "a TIMESTAMP or DATE")
        if spark in ("hour", "minute", "second") and t.name == "DATE":
            raise c.reject(f"{c.name} of a DATE is not supported")
        return f"CAST({spark}({c.sql[0]}) AS BIGINT)"
    return render


def _to_date(c: Call) -> str:
    """TO_DATE(s): the date of 'yyyy-M-d[ H:m:s[.fraction]]' text (what TO_TIMESTAMP reads),
    NULL for other text."""
    c.require(0, _string, "a string")
    return f"CAST({_to_timestamp(c)} AS DATE)"


def _to_timestamp(c: Call) -> str:
    c.require(0, _string, "a string")
    if len(c.args) > 1:
        raise c.reject("TO_TIMESTAMP with a format is not supported (Flink's parsing with a "
                       "format is lenient in ways Spark's is not); TO_TIMESTAMP(s) reads "
                       "'yyyy-MM-dd HH:mm:ss[.SSS]'")
    s = c.sql[0]
    value = f"date_trunc('MILLISECOND', try_cast(regexp_replace({s}, '\\\\.$', '') AS TIMESTAMP))"
    fail = value_refused(f"concat('TO_TIMESTAMP of \"', {s}, '\" (Flink adjusts an "
                         "out-of-range date or time)')", "TIMESTAMP")
    return f"(CASE WHEN {s} RLIKE '{_TS_SHAPE}' THEN coalesce({value}, {fail}) END)"


# UNIX_TIMESTAMP(s[, format]): Flink reads s with a lenient java.text.SimpleDateFormat (format
# 'yyyy-MM-dd HH:mm:ss' by default) in the session time zone (UTC in both twinflow and the Flink
# reference): numbers of any width rolling over, text after the format ignored, the Julian
# calendar before 1582-10-15, Long.MIN_VALUE for text it cannot read. Text that Spark's strict
# parse of the fields yyyy MM dd HH mm ss reads, Java reads alike (measured on Flink 2.3), so
# twinflow takes formats of those fields (each once) between separators or 'quoted text', and
# fails the run on text Spark cannot read or outside 1582-10-15 .. 9999-12-31 (_UNIX_RANGE).
_UNIX_FIELDS = ("yyyy", "MM", "dd", "HH", "mm", "ss")


def _unix_timestamp(c: Call) -> str:
    if not c.args:
        raise c.reject("UNIX_TIMESTAMP() is not supported (not deterministic: the current time)")
    c.require(0, _string, "a string")
    fmt = c.string(1, "format") if len(c.args) == 2 else "yyyy-MM-dd HH:mm:ss"
    fields = [m.group() for m in re.finditer(r"'[^']+'|([A-Za-z])\1*|'", fmt)
              if m.group() == "'" or not m.group().startswith("'")]
    if any(f not in _UNIX_FIELDS for f in fields) or len(set(fields)) != len(fields):
        raise c.reject(f"UNIX_TIMESTAMP with the format '{fmt}' is not supported (supported: "
                       f"the fields {' '.join(_UNIX_FIELDS)}, each once, between separators or "
                       "'quoted text')")
    s = c.sql[0]
    seconds = f"unix_timestamp(try_to_timestamp({s}, {_spark_string(fmt)}))"
    fail = value_refused(f"concat('UNIX_TIMESTAMP of \"', {s}, '\" (twinflow reads only text of "
                         f"the format ', {_spark_string(fmt)}, ', 1582-10-15 .. 9999-12-31)')",
                         "BIGINT")
    return (f"(CASE WHEN {s} IS NOT NULL THEN (CASE WHEN {seconds} BETWEEN {_UNIX_RANGE[0]} AND "
            f"{_UNIX_RANGE[1]} THEN {seconds} ELSE {fail} END) END)")


# FROM_UNIXTIME: Flink formats with the Julian calendar before 1582-10-15 (Spark: proleptic
# Gregorian) and overflows for absurd values; twinflow covers 1582-10-15 to 9999-12-31 and fails
# the run outside them.
_UNIX_RANGE = (-12219292800, 253402300799)


def _from_unixtime(c: Call) -> str:
    c.require(0, lambda t: t.is_integral, "an integer")
    fmt = _pattern(c, 1) if len(c.args) == 2 else "'yyyy-MM-dd HH:mm:ss'"
    n = c.sql[0]
    fail = value_refused(f"concat('FROM_UNIXTIME of ', {n}, ' (seconds outside 1582-10-15 .. "
                         "9999-12-31)')", "STRING")
    return (f"(CASE WHEN {n} BETWEEN {_UNIX_RANGE[0]} AND {_UNIX_RANGE[1]} THEN "
            f"from_unixtime({n}, {fmt}) WHEN {n} IS NOT NULL THEN {fail} END)")


def _to_timestamp_ltz(c: Call) -> str:
    """TO_TIMESTAMP_LTZ(n[, 0 | 3]): seconds (0) or milliseconds (3, the default) since the epoch
    as a TIMESTAMP_LTZ(3), shown in the session time zone (UTC)."""
    c.require(0, lambda t: t.is_integral, "an integer")
    unit = 3 if len(c.args) == 1 else c.int_literal(1)
    if unit not in (0, 3):
        raise c.reject("TO_TIMESTAMP_LTZ takes the precision 0 (seconds) or 3 (milliseconds)")
    convert = "timestamp_millis" if unit == 3 else "timestamp_seconds"
    return f"{convert}({c.sql[0]})"


_EXTRACT = {"YEAR": "year({})", "QUARTER": "quarter({})", "MONTH": "month({})",
            "WEEK": "weekofyear({})", "DAY": "day({})", "HOUR": "hour({})",
            "MINUTE": "minute({})", "SECOND": "second({})", "DOW": "dayofweek({})",
            "DOY": "dayofyear({})", "MILLISECOND": "CAST(date_format({}, 'SSS') AS INT)"}


def _extract(c: Call) -> str:
    """Flink's EXTRACT is a BIGINT (Spark: INT, SECOND a DECIMAL with the fraction); WEEK is the
    ISO week, DOW 1 = Sunday, MILLISECOND the milliseconds within the second."""
    unit = c.node.this.name.upper()
    if unit not in _EXTRACT:
        raise c.reject(f"EXTRACT({unit} FROM ..) is not supported (units: "
                       f"{', '.join(_EXTRACT)})")
    if c.type(0).name == "TIME":
        if unit not in ("HOUR", "MINUTE", "SECOND"):
            raise c.reject(f"EXTRACT({unit} FROM ..) of a TIME is not supported (units: HOUR, "
                           "MINUTE, SECOND)")
    else:
        c.require(0, lambda t: t.is_timestamp or t.name == "DATE", "a TIMESTAMP, DATE or TIME")
    return f"CAST({_EXTRACT[unit].format(c.sql[0])} AS BIGINT)"


_ADD_UNITS = {"SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "QUARTER", "YEAR"}


def _unit(c: Call) -> str:
    unit = c.args[0]
    name = unit.name.upper() if isinstance(unit, exp.Var) else ""
    if name not in _ADD_UNITS:
        raise c.reject(f"{c.name}: unsupported unit {unit.sql()} (units: "
                       f"{', '.join(sorted(_ADD_UNITS))})")
    return name


def _timestampadd(c: Call) -> str:
    """Month arithmetic clamps to the month's last day in both engines."""
    unit = _unit(c)
    c.require(1, lambda t: t.is_integral, "an integer")
    c.require(2, _timestamp, "a TIMESTAMP")
    return f"timestampadd({unit}, {c.sql[1]}, {c.sql[2]})"


def _timestampdiff(c: Call) -> str:
    """Whole units from the second to the third argument, truncated toward zero; INT."""
    unit = _unit(c)
    for i in (1, 2):
        c.require(i, _timestamp, "a TIMESTAMP")
    return f"CAST(timestampdiff({unit}, {c.sql[1]}, {c.sql[2]}) AS INT)"


# time (the session time zone is UTC in twinflow and in the Flink reference)
FUNCTIONS = [
    # a part of a timestamp or date (as EXTRACT; WEEK: ISO 8601, DAYOFWEEK: Sunday is 1)
    *[Function(name, 1, 1, _part(spark)) for name, spark in (
        ("YEAR", "year"), ("QUARTER", "quarter"), ("MONTH", "month"), ("WEEK", "weekofyear"),
        ("DAYOFYEAR", "dayofyear"), ("DAYOFMONTH", "dayofmonth"), ("DAYOFWEEK", "dayofweek"),
        ("HOUR", "hour"), ("MINUTE", "minute"), ("SECOND", "second"))],
    Function("TO_DATE", 1, 1, _to_date),
    Function("EXTRACT", 1, 1, _extract),
    Function("DATE_FORMAT", 2, 2, _date_format),
    Function("TIMESTAMPADD", 3, 3, _timestampadd),
    Function("TIMESTAMPDIFF", 3, 3, _timestampdiff),
    Function("TO_TIMESTAMP", 1, 2, _to_timestamp),
    Function("UNIX_TIMESTAMP", 0, 2, _unix_timestamp),
    Function("FROM_UNIXTIME", 1, 2, _from_unixtime),
    Function("TO_TIMESTAMP_LTZ", 1, 2, _to_timestamp_ltz),
]
