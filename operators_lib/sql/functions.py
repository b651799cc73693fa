"""The Flink built-in functions twinflow runs, each with how it renders to Spark SQL with Flink's
semantics. A function not in ``FUNCTIONS`` is refused (exit 2) with its name and line.

Adding a function is one ``Function`` row here plus a column in an oracle case under
``tests/cases/functions/`` (expected results from real Flink). A renderer gets the call's
arguments as Flink nodes and as Spark SQL text, can ask for an argument's Flink type, and raises
``Unsupported`` for an argument form whose Flink semantics it does not reproduce.
Semantics checked against Flink 2.3 (tests/cases/functions/*): see the notes on each renderer.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

from operators_lib.errors import DATA_ERROR
from operators_lib.sql.dialect import TYPED_LITERAL
from operators_lib.sql.regex import RegexTooComplex, group_always_participates
from operators_lib.types import NESTED, FlinkType

NULL_TYPE = FlinkType("NULL")


class Unsupported(Exception):
    """A construct twinflow refuses; the planner adds the statement's file and line."""

    def __init__(self, message: str, node: exp.Expression):
        super().__init__(message)
        self.node = node


@dataclass(frozen=True)
class Env:
    """What a renderer may ask: an expression's Flink type, a Java regex's group count."""

    type_of: Callable[[exp.Expression], FlinkType]
    regex_groups: Callable[[str], int | None]  # None: not a valid java.util.regex pattern


@dataclass(frozen=True)
class Call:
    name: str  # the Flink name, upper case
    node: exp.Expression  # the call as parsed, column references resolved
    args: tuple[exp.Expression, ...]  # its arguments (Flink)
    sql: tuple[str, ...]  # its arguments as Spark SQL
    env: Env

    def type(self, i: int) -> FlinkType:
        """Argument ``i``'s Flink type; a bare NULL literal has the type NULL (fits any)."""
        if isinstance(self.args[i], exp.Null):
            return NULL_TYPE
        return self.env.type_of(self.args[i])

    def string(self, i: int, what: str) -> str:
        """Argument ``i``, which must be a string literal."""
        a = self.args[i]
        if not (isinstance(a, exp.Literal) and a.is_string):
            raise self.reject(f"{self.name} needs a string literal as its {what}")
        return a.name

    def int_literal(self, i: int) -> int | None:
        a = self.args[i]
        neg = isinstance(a, exp.Neg)
        a = a.this if neg else a
        if isinstance(a, exp.Literal) and not a.is_string and re.fullmatch(r"\d+", a.name):
            return -int(a.name) if neg else int(a.name)
        return None

    def reject(self, message: str) -> Unsupported:
        return Unsupported(message, self.node)

    def require(self, i: int, ok: Callable[[FlinkType], bool], what: str) -> FlinkType:
        t = self.type(i)
        if t != NULL_TYPE and not ok(t):
            raise self.reject(f"{self.name} needs {what} as argument {i + 1}, got {t.sql()}")
        return t


@dataclass(frozen=True)
class Function:
    name: str
    min_args: int
    max_args: int | None  # None: any number
    render: Callable[[Call], str]


def _string(t: FlinkType) -> bool:
    return t.name == "STRING"


def _exact(t: FlinkType) -> bool:
    return t.is_integral or t.name == "DECIMAL"


def _timestamp(t: FlinkType) -> bool:
    return t.is_timestamp


def _collection(t: FlinkType) -> bool:
    return t.name in ("ARRAY", "MAP")


def _fmt(template: str) -> Callable[[Call], str]:
    """A renderer that fills ``{0}``, ``{1}``, .. with the Spark SQL of the arguments."""
    return lambda c: template.format(*c.sql)


def _strings(template: str) -> Callable[[Call], str]:
    """Like ``_fmt``, with every argument required to be a STRING (Flink's rule)."""
    def render(c: Call) -> str:
        for i in range(len(c.args)):
            c.require(i, _string, "a string")
        return template.format(", ".join(c.sql))
    return render


# -- strings -----------------------------------------------------------------------------------

def _spark_string(value: str) -> str:
    return exp.Literal.string(value).sql(dialect="spark")


def _regex(c: Call, i: int) -> str | None:
    """The pattern of argument ``i`` (a string literal); None if Java rejects it (Flink then
    returns NULL)."""
    pattern = c.string(i, "pattern")
    return pattern if c.env.regex_groups(pattern) is not None else None


def _regexp_extract(c: Call) -> str:
    """Flink: NULL when nothing matches, when the group takes no part in the match, when the
    index exceeds the groups or the pattern is invalid (Spark: '' or an error); the index
    defaults to 0 (Spark: 1)."""
    c.require(0, _string, "a string")
    pattern = _regex(c, 1)
    index = 0 if len(c.args) == 2 else c.int_literal(2)
    if index is None:
        raise c.reject("REGEXP_EXTRACT needs an integer literal as its group index")
    if pattern is None or index < 0 or index > c.env.regex_groups(pattern):
        return "CAST(NULL AS STRING)"
    try:
        always = group_always_participates(pattern, index)
    except RegexTooComplex:
        always = False
    if not always:
        raise c.reject(f"REGEXP_EXTRACT of group {index}, which may take no part in a match "
                       "(Flink returns NULL there, Spark ''): not supported")
    p = _spark_string(pattern)
    return f"(CASE WHEN {c.sql[0]} RLIKE {p} THEN regexp_extract({c.sql[0]}, {p}, {index}) END)"


def _regexp_replace(c: Call) -> str:
    """Flink's replacement is literal text ('$1' and '\\' are not special, Spark's are); an
    invalid pattern gives NULL."""
    for i in (0, 2):
        c.require(i, _string, "a string")
    pattern = _regex(c, 1)
    if pattern is None:
        return "CAST(NULL AS STRING)"
    literal = f"replace(replace({c.sql[2]}, '\\\\', '\\\\\\\\'), '$', '\\\\$')"
    return f"regexp_replace({c.sql[0]}, {_spark_string(pattern)}, {literal})"


def _split_index(c: Call) -> str:
    """Flink splits on the whole separator (not a regex), keeps empty parts, gives NULL for an
    empty string and for an index outside the parts (Spark's element_at fails)."""
    c.require(0, _string, "a string")
    sep = c.string(1, "separator")
    if sep == "":
        raise c.reject("SPLIT_INDEX with an empty separator (Flink splits on whitespace "
                       "then) is not supported")
    c.require(2, lambda t: t.is_integral, "an integer")
    quoted = "".join(ch if ch.isalnum() else "\\" + ch for ch in sep)
    s, idx = c.sql[0], c.sql[2]
    return (f"(CASE WHEN {s} <> '' AND {idx} >= 0 THEN try_element_at(split({s}, "
            f"{_spark_string(quoted)}, -1), {idx} + 1) END)")


def _substring(c: Call) -> str:
    """Positions from 1; 0 counts as 1 for the start and a negative start counts from the end,
    the same in both engines."""
    c.require(0, _string, "a string")
    for i in range(1, len(c.args)):
        c.require(i, lambda t: t.is_integral, "an integer")
    return f"substring({', '.join(c.sql)})"


def _trim(c: Call) -> str:
    """TRIM([BOTH | LEADING | TRAILING] [chars] FROM s): removes any of the characters (default
    ' ', not other blanks) in both engines."""
    for i in range(len(c.args)):
        c.require(i, _string, "a string")
    position = (c.node.args.get("position") or "BOTH").upper()
    chars = f"{c.sql[1]} " if len(c.sql) > 1 else ""
    return f"trim({position} {chars}FROM {c.sql[0]})"


def _concat_ws(c: Call) -> str:
    for i in range(len(c.args)):
        c.require(i, _string, "a string")
    return f"concat_ws({', '.join(c.sql)})"


# Flink's HASH_CODE(string) is Math.abs of Java's String.hashCode (s[0]*31^(n-1) + .. + s[n-1]
# over the UTF-16 code units, 32-bit; abs(-2^31) stays -2^31). Spark has no such function: fold
# over the UTF-16BE bytes two at a time modulo 2^32, read it as a signed INT, take abs.
_HASH_CODE = (
    "CAST(IF({x} = '', 0, (abs((aggregate(sequence(1, octet_length(encode({x}, 'UTF-16BE')), "
    "2), 0L, (h, i) -> (h * 31 + CAST(conv(hex(substr(encode({x}, 'UTF-16BE'), i, 2)), 16, 10) "
    "AS BIGINT)) % 4294967296) + 2147483648) % 4294967296 - 2147483648) + 2147483648) "
    "% 4294967296 - 2147483648) AS INT)")


def _hash_code(c: Call) -> str:
    c.require(0, _string, "a string")
    return _HASH_CODE.format(x=f"({c.sql[0]})")


# -- numbers -----------------------------------------------------------------------------------

def _mod(c: Call) -> str:
    """Java's remainder (the dividend's sign), as Spark's ``%``; Flink only takes exact
    numerics."""
    for i in (0, 1):
        c.require(i, _exact, "an exact numeric (integer or DECIMAL)")
    return f"{c.sql[0]} % {c.sql[1]}"


def _floor_ceil(c: Call) -> str:
    """FLOOR(x) / CEIL(x) keep x's type in Flink (Spark: BIGINT for a DOUBLE); FLOOR(ts TO
    unit) / CEIL(ts TO unit) round a timestamp (weeks start on Sunday, as in Flink)."""
    unit = c.node.args.get("to")
    if unit is None:
        t = c.require(0, lambda t: t.is_numeric, "a number")
        if t.is_integral:
            return c.sql[0]
        if not t.is_floating:
            return f"{c.name.lower()}({c.sql[0]})"
        # Java's Math.floor / Math.ceil: integral values (and NaN, infinities, -0.0) stay as
        # they are, a ceiling in (-1, 0) is -0.0; Spark's floor / ceil give a BIGINT.
        x, spark_t = c.sql[0], t.spark().simpleString()
        minus_zero = (f" WHEN {x} < 0 AND {x} > -1 THEN CAST('-0.0' AS {spark_t})"
                      if c.name == "CEIL" else "")
        return (f"CASE WHEN isnan({x}) OR abs({x}) >= 4503599627370496 OR {x} = 0 THEN {x}"
                f"{minus_zero} ELSE CAST({c.name.lower()}({x}) AS {spark_t}) END")
    c.require(0, _timestamp, "a TIMESTAMP")
    name = unit.name.upper()
    if name not in _TRUNC_UNITS:
        raise c.reject(f"{c.name}(.. TO {name}) is not supported (units: "
                       f"{', '.join(_TRUNC_UNITS)})")
    x = c.sql[0]
    floor = (f"(date_trunc('DAY', {x}) - make_interval(0, 0, 0, dayofweek({x}) - 1))"
             if name == "WEEK" else f"date_trunc('{name}', {x})")
    if c.name == "FLOOR":
        return floor
    # Flink's CEIL to WEEK and longer units rounds the date and drops the time of day
    # (CEIL('1970-01-01 00:00:00.001' TO MONTH) is 1970-01-01 00:00).
    same = f"date_trunc('DAY', {x})" if name in ("WEEK", "MONTH", "QUARTER", "YEAR") else x
    return f"(CASE WHEN {floor} = {same} THEN {floor} ELSE {floor} + {_TRUNC_UNITS[name]} END)"


_TRUNC_UNITS = {"SECOND": "INTERVAL 1 SECOND", "MINUTE": "INTERVAL 1 MINUTE",
                "HOUR": "INTERVAL 1 HOUR", "DAY": "INTERVAL 1 DAY", "WEEK": "INTERVAL 7 DAY",
                "MONTH": "INTERVAL 1 MONTH", "QUARTER": "INTERVAL 3 MONTH",
                "YEAR": "INTERVAL 1 YEAR"}


def _numeric(template: str) -> Callable[[Call], str]:
    def render(c: Call) -> str:
        for i in range(len(c.args)):
            c.require(i, lambda t: t.is_numeric, "a number")
        return _fmt(template)(c)
    return render


def _abs(c: Call) -> str:
    """Java's Math.abs (Flink): the smallest integer of its type is its own absolute value
    (Spark's ANSI mode fails there)."""
    t = c.require(0, lambda t: t.is_numeric, "a number")
    if t.is_integral:
        low = -(2 ** (t.integral_bits() - 1))
        return f"(CASE WHEN {c.sql[0]} = {low} THEN {c.sql[0]} ELSE abs({c.sql[0]}) END)"
    return f"abs({c.sql[0]})"


def _round(c: Call) -> str:
    """Half away from zero for DECIMAL and DOUBLE in both engines."""
    c.require(0, lambda t: t.is_numeric, "a number")
    if len(c.args) == 2 and c.int_literal(1) is None:
        raise c.reject("ROUND needs an integer literal as its number of digits")
    return f"round({', '.join(c.sql)})"


# -- time --------------------------------------------------------------------------------------

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


def _to_timestamp(c: Call) -> str:
    c.require(0, _string, "a string")
    if len(c.args) > 1:
        raise c.reject("TO_TIMESTAMP with a format is not supported (Flink's parsing with a "
                       "format is lenient in ways Spark's is not); TO_TIMESTAMP(s) reads "
                       "'yyyy-MM-dd HH:mm:ss[.SSS]'")
    s = c.sql[0]
    value = f"date_trunc('MILLISECOND', try_cast(regexp_replace({s}, '\\\\.$', '') AS TIMESTAMP))"
    fail = ("raise_error(concat('TO_TIMESTAMP: Flink adjusts the out-of-range date/time ', "
            f"{s}, '; twinflow does not reproduce that'))")
    return (f"(CASE WHEN {s} RLIKE '{_TS_SHAPE}' THEN coalesce({value}, CAST({fail} AS "
            "TIMESTAMP)) END)")


def _unix_timestamp(c: Call) -> str:
    """Seconds since the epoch of 'yyyy-MM-dd HH:mm:ss' text in the session time zone (UTC in
    both twinflow and the Flink reference). Flink gives Long.MIN_VALUE for text it cannot read
    and reads some other shapes leniently; twinflow fails the run on any other text."""
    if len(c.args) != 1:
        raise c.reject("UNIX_TIMESTAMP() (the current time) and UNIX_TIMESTAMP(s, format) are "
                       "not supported; UNIX_TIMESTAMP(s) reads 'yyyy-MM-dd HH:mm:ss'")
    c.require(0, _string, "a string")
    s = c.sql[0]
    fail = ("raise_error(concat('UNIX_TIMESTAMP: twinflow reads only yyyy-MM-dd HH:mm:ss '"
            f", 'text, not ', {s}))")
    return (f"(CASE WHEN {s} IS NOT NULL THEN coalesce(unix_timestamp(try_to_timestamp({s}, "
            f"'yyyy-MM-dd HH:mm:ss')), CAST({fail} AS BIGINT)) END)")


# FROM_UNIXTIME: Flink formats with the Julian calendar before 1582-10-15 (Spark: proleptic
# Gregorian) and overflows for absurd values; twinflow covers 1582-10-15 to 9999-12-31 and fails
# the run outside them.
_UNIX_RANGE = (-12219292800, 253402300799)


def _from_unixtime(c: Call) -> str:
    c.require(0, lambda t: t.is_integral, "an integer")
    fmt = _pattern(c, 1) if len(c.args) == 2 else "'yyyy-MM-dd HH:mm:ss'"
    n = c.sql[0]
    fail = "raise_error('FROM_UNIXTIME: seconds outside 1582-10-15 .. 9999-12-31')"
    return (f"(CASE WHEN {n} BETWEEN {_UNIX_RANGE[0]} AND {_UNIX_RANGE[1]} THEN "
            f"from_unixtime({n}, {fmt}) WHEN {n} IS NOT NULL THEN CAST({fail} AS STRING) END)")


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


# -- collections -------------------------------------------------------------------------------

def _common(c: Call, indexes, what: str) -> None:
    """Elements of one type, or numbers that Flink and Spark widen alike (integers and
    DECIMALs to a DECIMAL, anything with a DOUBLE to DOUBLE; not FLOAT, which Spark widens to
    DOUBLE and Flink does not), or TIMESTAMP(3)s and TIMESTAMP_LTZ(3)s (the same digits in the
    UTC session). NULL fits any."""
    types = {c.type(i) for i in indexes} - {NULL_TYPE}
    if not types:
        raise c.reject(f"{c.name} of NULLs only: CAST one of its {what} to its type")
    if len(types) == 1 or all(t.is_integral or t.name == "DECIMAL" for t in types) or (
            all(t.is_numeric and t.name != "FLOAT" for t in types)) or (
            all(t.is_timestamp and t.precision == 3 for t in types)):
        return
    shown = ", ".join(sorted(t.sql() for t in types))
    raise c.reject(f"{c.name} with {what} of different types ({shown}) is not supported; CAST "
                   "them to one type")


def _array(c: Call) -> str:
    _common(c, range(len(c.args)), "elements")
    return f"array({', '.join(c.sql)})"


def _map(c: Call) -> str:
    """A repeated key keeps its first place and its last value (Flink; Spark's LAST_WIN policy,
    spark.py). Keys are literals: Flink's maps may hold a NULL key, Spark's cannot."""
    if len(c.args) % 2:
        raise c.reject("MAP[..] takes keys and values in pairs")
    for key in c.args[::2]:
        if not isinstance(key, exp.Literal):
            raise c.reject(f"MAP[..] with the key {key.sql(dialect='spark')}: twinflow takes "
                           "literal keys only (a key may be NULL in Flink, never in Spark)")
    _common(c, range(0, len(c.args), 2), "keys")
    _common(c, range(1, len(c.args), 2), "values")
    return f"map({', '.join(c.sql)})"


def _row(c: Call) -> str:
    """Flink names a ROW(..)'s fields EXPR$0, ..; only their values are shown."""
    fields = ", ".join(f"'f{i}', {x}" for i, x in enumerate(c.sql))
    return f"named_struct({fields})"


def _item(c: Call) -> str:
    """``a[i]`` counts from 1; an index outside the array gives NULL (Flink refuses a literal 0).
    ``m[k]`` is NULL for a key the map does not have."""
    t = c.type(0)
    x, i = c.sql
    if t.name == "ARRAY":
        c.require(1, lambda t: t.is_integral, "an integer index")
        literal = c.int_literal(1)
        if literal is not None and literal < 1:
            raise c.reject(f"an ARRAY index starts at 1, got {literal}")
        return (f"(CASE WHEN {i} BETWEEN 1 AND 2147483647 THEN try_element_at({x}, CAST({i} AS "
                "INT)) END)")
    if t.name == "MAP":
        key = c.type(1)
        if key not in (NULL_TYPE, t.args[0]) and not (key.is_numeric and t.args[0].is_numeric):
            raise c.reject(f"a MAP<{t.args[0].sql()}, ..> looked up by a {key.sql()}")
        return f"try_element_at({x}, {i})"
    raise c.reject(f"[] needs an ARRAY or a MAP, got {t.sql()}")


def _cardinality(c: Call) -> str:
    c.require(0, _collection, "an ARRAY or a MAP")
    return f"(CASE WHEN {c.sql[0]} IS NOT NULL THEN size({c.sql[0]}) END)"


# -- conversions -------------------------------------------------------------------------------

def target_type(c: Call) -> FlinkType:
    """The Flink type of a CAST target, if twinflow computes it exactly."""
    to: exp.DataType = c.node.args["to"]
    found = _data_type(to)
    if found is not None:
        return found
    params = [p.sql() for p in to.expressions]
    kind = to.this
    names = {exp.DType.VARCHAR: "VARCHAR", exp.DType.CHAR: "CHAR", exp.DType.TIME: "TIME",
             exp.DType.TIMESTAMPTZ: "TIMESTAMP", exp.DType.TIMESTAMPLTZ: "TIMESTAMP_LTZ"}
    shown = to.sql(dialect="spark") if kind not in names else (
        names[kind] + (f"({', '.join(params)})" if params else ""))
    if kind in (exp.DType.TIMESTAMPTZ, exp.DType.TIMESTAMPLTZ) and not params:
        shown += f" (= {names[kind]}(6))"
    raise c.reject(f"{c.name} to {shown} is not supported (supported: TINYINT, SMALLINT, INT, "
                   "BIGINT, FLOAT, DOUBLE, DECIMAL(p, s), BOOLEAN, STRING, DATE, TIMESTAMP(3), "
                   "TIMESTAMP_LTZ(3), TIME(p), ARRAY<..> and MAP<.., ..> of these)")


_SIMPLE = {exp.DType.TINYINT: "TINYINT", exp.DType.SMALLINT: "SMALLINT", exp.DType.INT: "INT",
           exp.DType.BIGINT: "BIGINT", exp.DType.FLOAT: "FLOAT", exp.DType.DOUBLE: "DOUBLE",
           exp.DType.BOOLEAN: "BOOLEAN", exp.DType.DATE: "DATE", exp.DType.TEXT: "STRING"}


def _data_type(to: exp.DataType) -> FlinkType | None:
    kind = to.this
    if kind in (exp.DType.ARRAY, exp.DType.MAP):
        args = tuple(_data_type(a) if isinstance(a, exp.DataType) else None
                     for a in to.expressions)
        if len(args) != (1 if kind == exp.DType.ARRAY else 2) or None in args:
            return None
        return FlinkType(kind.value, args=args)
    params = [p.sql() for p in to.expressions]
    if kind in _SIMPLE and not params:
        return FlinkType(_SIMPLE[kind])
    if kind == exp.DType.VARCHAR and params in ([], ["2147483647"]):
        return FlinkType("STRING")  # CAST(.. AS VARCHAR) does not truncate in Flink
    if kind == exp.DType.DECIMAL and len(params) <= 2:
        return FlinkType.parse(to.sql(dialect="spark"))
    if kind == exp.DType.TIMESTAMPTZ and params == ["3"]:
        return FlinkType("TIMESTAMP", 3)
    if kind == exp.DType.TIMESTAMPLTZ and params == ["3"]:
        return FlinkType("TIMESTAMP_LTZ", 3)
    if kind == exp.DType.TIME and params in ([], ["0"], ["1"], ["2"], ["3"]):
        return FlinkType("TIME", int(params[0]) if params else 0)
    return None


def _cast(c: Call) -> str:
    """Flink's text of a TIMESTAMP(3) has 3 fraction digits and of a BOOLEAN is TRUE/FALSE
    (Spark: trailing zeros dropped, lower case). Strings become timestamps or dates only as
    literals ('yyyy-MM-dd HH:mm:ss.SSS'), booleans not at all: Flink's and Spark's readers
    accept different text. Narrowing to an integer wraps or saturates as in Java (Spark would
    fail, or give NULL for TRY_CAST)."""
    to = target_type(c)
    src = c.type(0)
    if src == NULL_TYPE:
        return f"CAST(NULL AS {to.spark().simpleString()})"
    if to.name in NESTED:
        if src != to:
            raise c.reject(f"{c.name} of a {src.sql()} to {to.sql()} is not supported (only "
                           "of NULL)")
        return c.sql[0]
    x = c.sql[0]
    spark_to = to.spark().simpleString()
    if src.name in ("TIME", "TIMESTAMP_LTZ") or to.name in ("TIME", "TIMESTAMP_LTZ") or (
            src.is_timestamp and to.is_timestamp):
        return _time_cast(c, src, to)
    if src.name in NESTED:
        raise c.reject(f"{c.name} of a {src.sql()} is not supported")
    if to.name == "STRING" and src.name == "TIMESTAMP":
        return _timestamp_text(x, src.precision)
    if to.name == "STRING" and src.name == "BOOLEAN":
        return f"upper(CAST({x} AS STRING))"
    if src.name == "STRING" and to.name in ("TIMESTAMP", "DATE", "BOOLEAN"):
        return _string_literal_cast(c, to)
    if to.is_integral and (src.is_floating or (src.is_integral and src.integral_bits() >
                                               to.integral_bits())):
        return _narrow(x, src, to)
    if to.is_integral and src.name == "STRING":
        return _text_to_integer(c, x, spark_to)
    func = "try_cast" if c.name == "TRY_CAST" else "CAST"
    return f"{func}({x} AS {spark_to})"


def _text_to_integer(c: Call, x: str, spark_to: str) -> str:
    """Flink reads text as an integer (BinaryStringDataUtil.toLong / toInt) after trimming
    spaces: an optional sign, digits, and a fraction that is checked to be digits and dropped
    ('46.5' is 46, '-0.9' is 0, '1.' is 1); anything else, or a value out of the type's range,
    fails the CAST (Flink's job fails: a data error, exit 2) and is NULL for TRY_CAST."""
    t = f"trim({x})"
    whole = f"regexp_extract({t}, '^([+-]?[0-9]*)', 1)"
    value = (f"try_cast(CASE WHEN {whole} IN ('', '+', '-') THEN '0' ELSE {whole} END "
             f"AS {spark_to})")
    shape = f"({t} RLIKE '^[+-]?[0-9]*([.][0-9]*)?$' AND {t} NOT IN ('', '+', '-'))"
    bad = "NULL" if c.name == "TRY_CAST" else data_error(
        f"concat('CAST: Flink cannot read the text \"', {x}, '\" as {spark_to.upper()}')",
        spark_to)
    return (f"(CASE WHEN {x} IS NULL THEN NULL WHEN {shape} AND {value} IS NOT NULL "
            f"THEN {value} ELSE {bad} END)")


def data_error(message_sql: str, spark_type: str) -> str:
    """Spark SQL that fails the job where Flink's job fails on the data; errors.py turns it
    into a DataError (exit 2) with ``message_sql``'s text."""
    return f"CAST(raise_error(concat('{DATA_ERROR}', {message_sql})) AS {spark_type})"


def _timestamp_text(x: str, precision: int) -> str:
    """A timestamp's text as Flink casts it: as many fraction digits as its precision."""
    return f"date_format({x}, 'yyyy-MM-dd HH:mm:ss{'.' + 'S' * precision if precision else ''}')"


def _time_cast(c: Call, src: FlinkType, to: FlinkType) -> str:
    """Casts from and to TIME and TIMESTAMP_LTZ, and between timestamp precisions: a timestamp
    to a lower precision is cut (Flink), a TIMESTAMP and a TIMESTAMP_LTZ convert in the session
    time zone (UTC: the same digits), a timestamp to TIME keeps its time of day, a TIME's text
    has its milliseconds' trailing zeros cut (at least one digit when TIME(p > 0))."""
    x = c.sql[0]
    if to.name == "STRING" and src.is_timestamp:
        return _timestamp_text(x, src.precision)
    if to.name == "STRING" and src.name == "TIME":
        text = f"CAST({x} AS STRING)"
        return text if src.precision == 0 else (
            f"(CASE WHEN instr({text}, '.') > 0 THEN {text} ELSE concat({text}, '.0') END)")
    if src.name == "STRING" and to.name == "TIME":
        a = c.args[0]
        if not (isinstance(a, exp.Literal) and a.is_string and re.fullmatch(
                r"\d{2}:\d{2}:\d{2}(\.\d{1,3})?", a.name)):
            raise c.reject(f"{c.name} of a STRING to TIME is only supported for a literal like "
                           "'10:15:00'")
        return f"CAST({x} AS {to.spark().simpleString()})"
    if to.is_timestamp and src.is_timestamp:
        return f"date_trunc('MILLISECOND', {x})" if src.precision > to.precision else x
    if to.name == "TIME" and src.name == "TIME":
        return f"CAST({x} AS {to.spark().simpleString()})"
    if to.name == "TIME" and src.is_timestamp:
        # Flink takes the milliseconds since the epoch modulo a day with Java's %, which is
        # negative before 1970 (shown as 00:00:00): not reproduced, the run fails there.
        fail = f"raise_error('{c.name} to TIME of a timestamp before 1970 is not supported')"
        return (f"(CASE WHEN {x} >= TIMESTAMP'1970-01-01 00:00:00' THEN CAST({x} AS "
                f"{to.spark().simpleString()}) WHEN {x} IS NOT NULL THEN CAST({fail} AS "
                f"{to.spark().simpleString()}) END)")
    raise c.reject(f"{c.name} of a {src.sql()} to {to.sql()} is not supported")


def _narrow(x: str, src: FlinkType, to: FlinkType) -> str:
    """Java's narrowing, as Flink casts (and TRY_CASTs, which cannot fail here): a floating
    value saturates at the int/long range (NaN is 0), then integers keep their low bits."""
    bits = to.integral_bits()
    if src.is_floating:
        wide = 64 if bits == 64 else 32
        lo, hi = -(2 ** (wide - 1)), 2 ** (wide - 1) - 1
        x = (f"(CASE WHEN isnan({x}) THEN 0 WHEN {x} >= {hi} THEN {hi} WHEN {x} <= {lo} THEN "
             f"{lo} ELSE CAST({x} AS {'bigint' if wide == 64 else 'int'}) END)")
        if bits == wide:
            return x
    half, full = 2 ** (bits - 1), 2 ** bits
    return (f"CAST(pmod(pmod(CAST({x} AS BIGINT), {full}) + {half}, {full}) - {half} AS "
            f"{to.spark().simpleString()})")


_LITERAL_SHAPES = {"DATE": r"\d{4}-\d{2}-\d{2}",
                   "TIMESTAMP": r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}"}


def _string_literal_cast(c: Call, to: FlinkType) -> str:
    shape = _LITERAL_SHAPES.get(to.name)
    a = c.args[0]
    if shape is None or not (isinstance(a, exp.Literal) and a.is_string
                             and re.fullmatch(shape, a.name)):
        example = "'2024-01-31'" if to.name == "DATE" else "'2024-01-31 10:15:00.000'"
        raise c.reject(f"{c.name} of a STRING to {to.sql()} is only supported for a literal "
                       f"like {example}" if shape else
                       f"{c.name} of a STRING to {to.sql()} is not supported")
    return f"CAST({c.sql[0]} AS {to.spark().simpleString()})"


def _typed_literal(c: Call) -> str:
    """``TIMESTAMP '..'`` has as many fraction digits as its text (Flink: TIMESTAMP(0) for
    '2024-01-31 10:15:00'); twinflow computes TIMESTAMP(3) only. ``TIME '10:15:00[.f]'`` is a
    TIME with as many fraction digits as its text."""
    if c.node.args["to"].this == exp.DType.TIME:
        m = re.fullmatch(r"\d{2}:\d{2}:\d{2}(?:\.(\d{1,3}))?", c.args[0].name)
        if not m:
            raise c.reject(f"TIME literal {c.args[0].sql()}: write it like TIME '10:15:00'")
        return f"CAST({c.sql[0]} AS TIME({len(m.group(1) or '')}))"
    to = "TIMESTAMP" if c.node.args["to"].this != exp.DType.DATE else "DATE"
    shape = _LITERAL_SHAPES[to]
    if not re.fullmatch(shape, c.args[0].name):
        example = "DATE '2024-01-31'" if to == "DATE" else "TIMESTAMP '2024-01-31 10:15:00.000'"
        raise c.reject(f"{to} literal {c.args[0].sql()}: write it like {example} (twinflow "
                       "computes timestamps with millisecond precision only)")
    return f"CAST({c.sql[0]} AS {to})"


def _typeof(c: Call) -> str:
    raise c.reject("TYPEOF is resolved when columns are resolved")  # see Scope.resolve


def _if(c: Call) -> str:
    return f"(CASE WHEN {c.sql[0]} THEN {c.sql[1]} ELSE {c.sql[2]} END)"


FUNCTIONS: dict[str, Function] = {f.name: f for f in [
    # conditionals
    Function("COALESCE", 1, None, lambda c: f"coalesce({', '.join(c.sql)})"),
    Function("IF", 3, 3, _if),
    Function("NULLIF", 2, 2, _fmt("nullif({0}, {1})")),
    # conversions (TIMESTAMP_LITERAL: ``TIMESTAMP '..'`` / ``DATE '..'``)
    Function("CAST", 1, 1, _cast),
    Function("TRY_CAST", 1, 1, _cast),
    Function("TIMESTAMP_LITERAL", 1, 1, _typed_literal),
    Function("TYPEOF", 1, 1, _typeof),
    # strings (positions and lengths count code points in both engines)
    Function("CONCAT", 1, None, _strings("concat({})")),
    Function("CONCAT_WS", 2, None, _concat_ws),
    Function("SUBSTRING", 2, 3, _substring),
    Function("UPPER", 1, 1, _strings("upper({})")),
    Function("LOWER", 1, 1, _strings("lower({})")),
    Function("TRIM", 1, 2, _trim),
    Function("CHAR_LENGTH", 1, 1, _strings("char_length({})")),
    Function("CHARACTER_LENGTH", 1, 1, _strings("char_length({})")),
    Function("REGEXP_EXTRACT", 2, 3, _regexp_extract),
    Function("REGEXP_REPLACE", 3, 3, _regexp_replace),
    Function("SPLIT_INDEX", 3, 3, _split_index),
    Function("HASH_CODE", 1, 1, _hash_code),
    # numbers
    Function("ABS", 1, 1, _abs),
    Function("MOD", 2, 2, _mod),
    Function("POWER", 2, 2, _numeric("power({0}, {1})")),
    Function("SQRT", 1, 1, _numeric("sqrt({0})")),
    Function("ROUND", 1, 2, _round),
    Function("FLOOR", 1, 1, _floor_ceil),
    Function("CEIL", 1, 1, _floor_ceil),
    # time (the session time zone is UTC in twinflow and in the Flink reference)
    Function("EXTRACT", 1, 1, _extract),
    Function("DATE_FORMAT", 2, 2, _date_format),
    Function("TIMESTAMPADD", 3, 3, _timestampadd),
    Function("TIMESTAMPDIFF", 3, 3, _timestampdiff),
    Function("TO_TIMESTAMP", 1, 2, _to_timestamp),
    Function("UNIX_TIMESTAMP", 0, 2, _unix_timestamp),
    Function("FROM_UNIXTIME", 1, 2, _from_unixtime),
    Function("TO_TIMESTAMP_LTZ", 1, 2, _to_timestamp_ltz),
    # collections: ARRAY[..], MAP[..], ROW(..), a[i] / m[k] (ITEM), CARDINALITY
    Function("ARRAY", 1, None, _array),
    Function("MAP", 2, None, _map),
    Function("ROW", 1, None, _row),
    Function("ITEM", 2, 2, _item),
    Function("CARDINALITY", 1, 1, _cardinality),
]}

# Aggregates: planned by sql/aggregate.py and sql/over.py (COUNT, SUM, AVG, MIN, MAX, with
# DISTINCT and FILTER (WHERE ..)); ranking functions by sql/topn.py.
AGGREGATES = ("COUNT", "SUM", "AVG", "MIN", "MAX")
RANKING = ("ROW_NUMBER", "RANK", "DENSE_RANK")


def function_call(node: exp.Expression) -> tuple[str, list[exp.Expression]] | None:
    """(Flink name, arguments) if ``node`` is a call of a scalar function, else None. Most calls
    are ``exp.Anonymous`` (sql/dialect.py); the special syntax has sqlglot classes."""
    if isinstance(node, exp.Anonymous):
        return node.name.upper(), list(node.expressions)
    if isinstance(node, exp.Array):
        return "ARRAY", list(node.expressions)
    if isinstance(node, exp.Bracket):
        return "ITEM", [node.this, *node.expressions]
    if isinstance(node, exp.TryCast):  # a subclass of exp.Cast
        return "TRY_CAST", [node.this]
    if isinstance(node, exp.Cast):
        return ("TIMESTAMP_LITERAL" if node.meta.get(TYPED_LITERAL) else "CAST"), [node.this]
    if isinstance(node, exp.Extract):
        return "EXTRACT", [node.expression]
    if isinstance(node, exp.Trim):
        return "TRIM", [node.this] + ([node.expression] if node.expression else [])
    if isinstance(node, exp.Substring):
        return "SUBSTRING", [a for a in (node.this, node.args.get("start"),
                                         node.args.get("length")) if a is not None]
    if isinstance(node, (exp.Floor, exp.Ceil)):
        return node.key.upper(), [node.this] + ([node.args["decimals"]]
                                                if node.args.get("decimals") else [])
    if isinstance(node, exp.If) and not isinstance(node.parent, exp.Case):
        return "IF", [node.this, node.args.get("true"), node.args.get("false")]
    return None
