"""What every renderer of the function catalog uses: the call it renders (its arguments as
Flink nodes and as Spark SQL, their Flink types) and the argument checks."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from sqlglot import exp

from operators_lib.errors import DATA_ERROR, VALUE_REFUSED
from operators_lib.types import FlinkType

NULL_TYPE = FlinkType("NULL")


class Unsupported(Exception):
    """A construct twinflow refuses; the planner adds the statement's file and line."""

    def __init__(self, message: str, node: exp.Expression):
        super().__init__(message)
        self.node = node


@dataclass(frozen=True)
class Env:
    """What a renderer may ask: an expression's Flink type, a Java regex's group count; and
    the user-defined functions (sql/python_udfs.py) by upper-case name."""

    type_of: Callable[[exp.Expression], FlinkType]
    regex_groups: Callable[[str], int | None]  # None: not a valid java.util.regex pattern
    functions: Mapping[str, Function] = field(default_factory=dict)
    condition: bool = False  # the expression is a WHERE or HAVING condition
    origins: Mapping[str, str] = field(default_factory=dict)  # a column's plan Field.origin
    # Java's Formatter exception (Locale.US) for a format over sample arguments, if it throws
    format_error: Callable[[str, tuple], str | None] = lambda fmt, samples: "no JVM"
    time_zone_id: Callable[[str], str] = lambda zone: zone  # java.util.TimeZone's ID for it


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


def _integral(t: FlinkType) -> bool:
    return t.is_integral


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




def _numeric(template: str) -> Callable[[Call], str]:
    def render(c: Call) -> str:
        for i in range(len(c.args)):
            c.require(i, lambda t: t.is_numeric, "a number")
        return _fmt(template)(c)
    return render


def data_error(message_sql: str, spark_type: str) -> str:
    """Spark SQL that fails the job where Flink's job fails on the data; errors.classify makes
    it a DataError (exit 2) with ``message_sql``'s text."""
    return f"CAST(raise_error(concat('{DATA_ERROR}', {message_sql})) AS {spark_type})"


def value_refused(message_sql: str, spark_type: str) -> str:
    """Spark SQL that fails the job on a value whose Flink answer twinflow does not reproduce
    (rather than give another): a DataError (exit 2) naming it."""
    return f"CAST(raise_error(concat('{VALUE_REFUSED}', {message_sql})) AS {spark_type})"


def ieee_divide(sa: str, sb: str) -> str:
    """Floating division as Java's (Flink's): by zero it is NaN (0 / 0, NaN / 0) or an
    infinity signed by both operands' signs (-0.0 counts as negative); Spark's ANSI mode fails
    there instead."""
    negative_zero = f"(CAST(CAST({sb} AS DOUBLE) AS STRING) LIKE '-%')"
    return (f"(CASE WHEN ({sa}) IS NULL OR ({sb}) IS NULL THEN NULL WHEN ({sb}) = 0 THEN "
            f"(CASE WHEN isnan(CAST({sa} AS DOUBLE)) OR ({sa}) = 0 THEN double('NaN') "
            f"WHEN (({sa}) > 0) = NOT {negative_zero} THEN double('Infinity') "
            f"ELSE double('-Infinity') END) ELSE ({sa}) / ({sb}) END)")
