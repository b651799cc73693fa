"""ARRAY[..], MAP[..], ROW(..), a[i] / m[k] (ITEM), CARDINALITY."""

from __future__ import annotations

from sqlglot import exp

from operators_lib.sql.functions.base import (
    NULL_TYPE,
    Call,
    Function,
    _collection,
)


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


# collections: ARRAY[..], MAP[..], ROW(..), a[i] / m[k] (ITEM), CARDINALITY
FUNCTIONS = [
    Function("ARRAY", 1, None, _array),
    Function("MAP", 2, None, _map),
    Function("ROW", 1, None, _row),
    Function("ITEM", 2, 2, _item),
    Function("CARDINALITY", 1, 1, _cardinality),
]
