"""Numeric functions: Java's (Flink's) rules where Spark's differ."""

from __future__ import annotations

from operators_lib.sql.functions.base import (
    Call,
    Function,
    _exact,
    _numeric,
    _timestamp,
)


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


# numbers
FUNCTIONS = [
    Function("ABS", 1, 1, _abs),
    Function("MOD", 2, 2, _mod),
    Function("POWER", 2, 2, _numeric("power({0}, {1})")),
    Function("SQRT", 1, 1, _numeric("sqrt({0})")),
    Function("ROUND", 1, 2, _round),
    Function("FLOOR", 1, 1, _floor_ceil),
    Function("CEIL", 1, 1, _floor_ceil),
]
