"""Numeric functions: Java's (Flink's) rules where Spark's differ."""

from __future__ import annotations

from collections.abc import Callable

from operators_lib.sql.functions.base import (
    Call,
    Function,
    _exact,
    _numeric,
    _timestamp,
    ieee_divide,
)


def _mod(c: Call) -> str:
    """Java's remainder (the dividend's sign), as Spark's ``%``; Flink only takes exact
    numerics."""
    for i in (0, 1):
        c.require(i, _exact, "an exact numeric (integer or DECIMAL)")
    return f"{c.sql[0]} % {c.sql[1]}"


def _floor_ceil(c: Call) -> str:
    """FLOOR(x) / CEIL(x) (or CEILING(x)) keep x's type in Flink (Spark: BIGINT for a DOUBLE);
    FLOOR(ts TO unit) / CEIL(ts TO unit) round a timestamp (weeks start on Sunday, as in
    Flink)."""
    unit = c.node.args.get("to")
    func = "CEIL" if c.name == "CEILING" else c.name
    if unit is None:
        t = c.require(0, lambda t: t.is_numeric, "a number")
        if t.is_integral:
            return c.sql[0]
        if not t.is_floating:
            return f"{func.lower()}({c.sql[0]})"
        # Java's Math.floor / Math.ceil: integral values (and NaN, infinities, -0.0) stay as
        # they are, a ceiling in (-1, 0) is -0.0; Spark's floor / ceil give a BIGINT.
        x, spark_t = c.sql[0], t.spark().simpleString()
        minus_zero = (f" WHEN {x} < 0 AND {x} > -1 THEN CAST('-0.0' AS {spark_t})"
                      if func == "CEIL" else "")
        return (f"CASE WHEN isnan({x}) OR abs({x}) >= 4503599627370496 OR {x} = 0 THEN {x}"
                f"{minus_zero} ELSE CAST({func.lower()}({x}) AS {spark_t}) END")
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




def _bin(c: Call) -> str:
    """BIN(n): Java's Long.toBinaryString, a negative n as its 64-bit two's complement (as
    Spark's bin); Flink takes integers only."""
    c.require(0, lambda t: t.is_integral, "an integer")
    return f"bin({c.sql[0]})"


def _hex(c: Call) -> str:
    """HEX(n) of an integer: upper-case Long.toHexString (64-bit two's complement when
    negative); HEX(s): the upper-case hex of the UTF-8 bytes. Both as Spark's hex; Flink refuses
    DOUBLE and DECIMAL arguments."""
    c.require(0, lambda t: t.is_integral or t.name == "STRING", "an integer or a string")
    return f"hex({c.sql[0]})"


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


def _sign(c: Call) -> str:
    """SIGN keeps its argument's type in Flink (Spark: DOUBLE)."""
    t = c.require(0, lambda t: t.is_numeric, "a number")
    if t.is_floating:
        return f"signum({c.sql[0]})"
    return f"CAST(signum({c.sql[0]}) AS {t.spark().simpleString()})"


def _ln(x: str) -> str:
    """Java's Math.log: -Infinity at 0, NaN below (Spark's ln: NULL for both)."""
    d = f"CAST({x} AS DOUBLE)"
    return (f"(CASE WHEN {d} = 0 THEN double('-Infinity') WHEN {d} < 0 OR isnan({d}) THEN "
            f"double('NaN') ELSE ln({d}) END)")


def _log(template: str | None) -> Callable[[Call], str]:
    """LN, LOG10, LOG2 and LOG(x) / LOG(base, x) as Java computes them: -Infinity at 0, NaN
    below 0 (Spark: NULL); LOG(base, x) is ln(x) / ln(base), an IEEE division."""
    def render(c: Call) -> str:
        for i in range(len(c.args)):
            c.require(i, lambda t: t.is_numeric, "a number")
        if len(c.sql) == 2:
            return ieee_divide(_ln(c.sql[1]), _ln(c.sql[0]))
        if template is None:
            return _ln(c.sql[0])
        d = f"CAST({c.sql[0]} AS DOUBLE)"
        return (f"(CASE WHEN {d} > 0 THEN {template.format(d)} ELSE {_ln(c.sql[0])} END)")
    return render


def _truncate(c: Call) -> str:
    """TRUNCATE(x [, n]): x cut (toward zero) to n decimals, n a literal >= 0 (default 0); a
    DOUBLE is cut as Flink cuts BigDecimal.valueOf(x), its shortest decimal text."""
    t = c.require(0, lambda t: t.is_numeric, "a number")
    n = 0 if len(c.args) == 1 else c.int_literal(1)
    if n is None or n < 0:
        raise c.reject("TRUNCATE needs a literal number of decimals >= 0")
    x = c.sql[0]

    def cut(v: str) -> str:
        return f"(CASE WHEN {v} >= 0 THEN floor({v}, {n}) ELSE ceil({v}, {n}) END)"
    if t.is_integral:
        return x
    if t.name == "DECIMAL":
        if n >= t.scale:
            return x
        return f"CAST({cut(x)} AS DECIMAL({t.precision}, {n}))"
    exact = f"try_cast(CAST({x} AS STRING) AS DECIMAL(38, 18))"
    return (f"CAST(CASE WHEN abs({x}) >= 1e15 OR isnan({x}) THEN {x} ELSE {cut(exact)} END "
            f"AS {t.spark().simpleString()})")


def _extreme(name: str) -> Callable[[Call], str]:
    """GREATEST / LEAST: NULL when any argument is NULL in Flink (Spark skips NULLs)."""
    def render(c: Call) -> str:
        nulls = " OR ".join(f"{x} IS NULL" for x in c.sql)
        return f"(CASE WHEN {nulls} THEN NULL ELSE {name}({', '.join(c.sql)}) END)"
    return render


# numbers
FUNCTIONS = [
    Function("SIGN", 1, 1, _sign),
    Function("EXP", 1, 1, _numeric("exp({0})")),
    Function("LN", 1, 1, _log(None)),
    Function("LOG", 1, 2, _log(None)),
    Function("LOG10", 1, 1, _log("log10({})")),
    Function("LOG2", 1, 1, _log("log2({})")),
    Function("TRUNCATE", 1, 2, _truncate),
    Function("GREATEST", 2, None, _extreme("greatest")),
    Function("LEAST", 2, None, _extreme("least")),
    Function("PI", 0, 0, lambda c: "pi()"),
    Function("E", 0, 0, lambda c: "e()"),
    Function("BIN", 1, 1, _bin),
    Function("HEX", 1, 1, _hex),
    *[Function(name, 1, 1, _numeric(f"{name.lower()}({{0}})"))
      for name in ("DEGREES", "RADIANS", "SIN", "COS", "TAN", "ASIN", "ACOS", "ATAN", "COT",
                   "SINH", "COSH", "TANH")],
    Function("ATAN2", 2, 2, _numeric("atan2({0}, {1})")),
    Function("ABS", 1, 1, _abs),
    Function("MOD", 2, 2, _mod),
    Function("POWER", 2, 2, _numeric("power({0}, {1})")),
    Function("SQRT", 1, 1, _numeric("sqrt({0})")),
    Function("ROUND", 1, 2, _round),
    Function("FLOOR", 1, 1, _floor_ceil),
    Function("CEIL", 1, 1, _floor_ceil),
    Function("CEILING", 1, 1, _floor_ceil),
]
