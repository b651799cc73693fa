"""Flink's ARRAY_* and MAP_* functions, ELEMENT and SPLIT, over the arrays and maps of
ARRAY[..], MAP[..] and the functions that make them. Elements compare by value, NULL equal to
NULL (Flink's rule; Spark's array_contains and array_position give NULL instead); FLOAT and
DOUBLE elements are refused where elements are compared (-0.0 and NaN compare otherwise in
Spark). Every function is NULL for a NULL array or map. Measured on Flink 2.3
(tests/cases/functions/collections)."""

from __future__ import annotations

from collections.abc import Callable

from operators_lib.sql.functions.base import (
    NULL_TYPE,
    Call,
    Function,
    _string,
    data_error,
    value_refused,
)
from operators_lib.types import FlinkType


def _array(c: Call, i: int, compared: bool = False) -> FlinkType:
    """Argument ``i``, an ARRAY; its element type. ``compared``: the function compares the
    elements (refused for FLOAT and DOUBLE)."""
    t = c.type(i)
    if t.name != "ARRAY":
        raise c.reject(f"{c.name} needs an ARRAY as argument {i + 1}, got {t.sql()}")
    if compared and t.args[0].is_floating:
        raise c.reject(f"{c.name} of {t.args[0].sql()} elements is not supported (Flink and "
                       "Spark compare -0.0 and NaN differently)")
    return t.args[0]


def _same(c: Call, i: int, element: FlinkType, what: str = "element") -> None:
    """Argument ``i`` has exactly the type ``element`` (Flink refuses another, or widens it
    its own way: ARRAY_UNION of an INT and a BIGINT array makes NULL a 0)."""
    t = c.type(i)
    if t != element:
        raise c.reject(f"{c.name} with {what}s of different types ({element.sql()}, "
                       f"{'NULL' if t == NULL_TYPE else t.sql()}): CAST them to one type")


def _with_value(template: str) -> Callable[[Call], str]:
    """(array, value) functions; ``{a}`` the array, ``{x}`` the value."""
    def render(c: Call) -> str:
        _same(c, 1, _array(c, 0, compared=True))
        return template.format(a=c.sql[0], x=c.sql[1])
    return render


def _adding(template: str) -> Callable[[Call], str]:
    """ARRAY_APPEND / ARRAY_PREPEND: the value (NULL too) at the end / the start."""
    def render(c: Call) -> str:
        element = _array(c, 0)
        if c.type(1) != NULL_TYPE:
            _same(c, 1, element)
        return template.format(a=c.sql[0], x=c.sql[1])
    return render


def _arrays(template: str, compared: bool = True) -> Callable[[Call], str]:
    """Functions of arrays of one element type; ``{0}``.. the arrays, ``{all}`` all of them."""
    def render(c: Call) -> str:
        element = _array(c, 0, compared)
        for i in range(1, len(c.args)):
            _array(c, i)
            _same(c, i, FlinkType("ARRAY", args=(element,)), "array")
        return template.format(*c.sql, all=", ".join(c.sql))
    return render


def _slice(c: Call) -> str:
    """ARRAY_SLICE(a, start [, end]): positions from 1, both included, negative ones counted
    from the end, 0 read as 1; clamped to the array; [] when start is after end."""
    _array(c, 0)
    for i in range(1, len(c.args)):
        c.require(i, lambda t: t.is_integral, "an integer")
    a, n = c.sql[0], f"size({c.sql[0]})"

    def place(x: str) -> str:
        return f"(CASE WHEN {x} = 0 THEN 1 WHEN {x} < 0 THEN {n} + {x} + 1 ELSE {x} END)"
    lo = f"greatest({place(c.sql[1])}, 1)"
    hi = f"least({place(c.sql[2]) if len(c.sql) == 3 else n}, {n})"
    nulls = " OR ".join(f"{x} IS NULL" for x in c.sql)
    return (f"(CASE WHEN {nulls} THEN NULL WHEN {lo} > {hi} THEN slice({a}, 1, 0) "
            f"ELSE slice({a}, CAST({lo} AS INT), CAST({hi} - {lo} + 1 AS INT)) END)")


def _sort(c: Call) -> str:
    """ARRAY_SORT(a [, ascending [, nulls_first]]): ascending by default; NULLs first when
    ascending, last when descending, unless nulls_first says. The flags are literals."""
    _array(c, 0, compared=True)
    flags = []
    for i in range(1, len(c.args)):
        arg = c.args[i]
        if arg.key != "boolean":
            raise c.reject(f"{c.name} needs TRUE or FALSE as argument {i + 1}")
        flags.append(arg.this)
    asc = flags[0] if flags else True
    nulls_first = flags[1] if len(flags) > 1 else asc
    a = c.sql[0]
    values = f"sort_array(filter({a}, e -> e IS NOT NULL), {'true' if asc else 'false'})"
    nulls = f"filter({a}, e -> e IS NULL)"
    return f"concat({nulls}, {values})" if nulls_first else f"concat({values}, {nulls})"


def _join(c: Call) -> str:
    """ARRAY_JOIN(a, sep [, null_text]): NULL elements skipped, or written as null_text (as
    Spark's array_join)."""
    element = _array(c, 0)
    if element.name != "STRING":
        raise c.reject(f"ARRAY_JOIN needs an ARRAY<STRING>, got ARRAY<{element.sql()}>")
    for i in range(1, len(c.args)):
        c.require(i, _string, "a string")
    return f"array_join({', '.join(c.sql)})"


def _element(c: Call) -> str:
    """ELEMENT(a): the only element, NULL for []; Flink's job fails on more than one."""
    element = _array(c, 0)
    a, spark_t = c.sql[0], element.spark().simpleString()
    fail = data_error("'ELEMENT: the array has more than one element'", spark_t)
    return (f"(CASE WHEN size({a}) = 1 THEN element_at({a}, 1) WHEN size({a}) > 1 THEN {fail} "
            "END)")


def _map(c: Call, i: int) -> FlinkType:
    t = c.type(i)
    if t.name != "MAP":
        raise c.reject(f"{c.name} needs a MAP as argument {i + 1}, got {t.sql()}")
    return t


def _of_map(template: str) -> Callable[[Call], str]:
    def render(c: Call) -> str:
        _map(c, 0)
        return template.format(c.sql[0])
    return render


def _map_entries(c: Call) -> str:
    """MAP_ENTRIES(m): ROW(key, value)s in the map's order."""
    _map(c, 0)
    return f"transform(map_entries({c.sql[0]}), e -> named_struct('f0', e.key, 'f1', e.value))"


def _map_union(c: Call) -> str:
    """MAP_UNION(m1, m2, ..): Flink takes the maps from the last to the first, adding each key
    not yet there: the last map's entries first, a key keeps its last map's value."""
    t = _map(c, 0)
    for i in range(1, len(c.args)):
        _same(c, i, t, "map")
    entries = f"concat({', '.join(f'map_entries({m})' for m in reversed(c.sql))})"
    return (f"map_from_entries(filter({entries}, (e, i) -> array_position(transform({entries}, "
            "x -> x.key), e.key) = i + 1))")


def _map_from_arrays(c: Call) -> str:
    """MAP_FROM_ARRAYS(keys, values): Flink's job fails on arrays of different lengths; a NULL
    or repeated key (which Flink's map keeps, Spark's cannot) is refused by value."""
    key = _array(c, 0, compared=True)
    _array(c, 1)
    k, v = c.sql
    spark_t = FlinkType("MAP", args=(key, c.type(1).args[0])).spark().simpleString()
    fail = data_error("'MAP_FROM_ARRAYS: the arrays have different lengths'", spark_t)
    refused = value_refused("'MAP_FROM_ARRAYS with a NULL or repeated key'", spark_t)
    return (f"(CASE WHEN {k} IS NULL OR {v} IS NULL THEN NULL WHEN size({k}) <> size({v}) "
            f"THEN {fail} WHEN exists({k}, x -> x IS NULL) OR size(array_distinct({k})) < "
            f"size({k}) THEN {refused} ELSE map_from_arrays({k}, {v}) END)")


def _split(c: Call) -> str:
    """SPLIT(s, sep): the parts between the whole separator (not a regex), empty ones kept;
    [] for ''. An empty separator splits into characters: Java chars in Flink, so a
    character outside the Basic Multilingual Plane (two chars) is refused by value."""
    for i in (0, 1):
        c.require(i, _string, "a string")
    s, sep = c.sql
    quoted = f"regexp_replace({sep}, '([^A-Za-z0-9])', '\\\\\\\\$1')"
    refused = value_refused(f"concat('SPLIT into characters of \"', {s}, '\" (a character "
                            "beyond the Basic Multilingual Plane)')", "array<string>")
    wide = f"({s} RLIKE '[^\\\\x{{0}}-\\\\x{{FFFF}}]')"
    return (f"(CASE WHEN {s} IS NULL OR {sep} IS NULL THEN NULL WHEN {s} = '' THEN "
            f"array_remove(array(''), '') WHEN {sep} = '' AND {wide} THEN {refused} "
            f"WHEN {sep} = '' THEN split({s}, '') ELSE split({s}, {quoted}, -1) END)")


FUNCTIONS = [
    Function("ARRAY_CONTAINS", 2, 2, _with_value("(CASE WHEN {a} IS NOT NULL THEN "
                                                 "exists({a}, e -> e <=> {x}) END)")),
    Function("ARRAY_POSITION", 2, 2, _with_value(
        "(CASE WHEN {a} IS NOT NULL AND {x} IS NOT NULL THEN coalesce(CAST(array_position("
        "transform({a}, e -> e <=> {x}), true) AS INT), 0) END)")),
    Function("ARRAY_REMOVE", 2, 2, _with_value("filter({a}, e -> NOT (e <=> {x}))")),
    Function("ARRAY_APPEND", 2, 2, _adding("array_append({a}, {x})")),
    Function("ARRAY_PREPEND", 2, 2, _adding("array_prepend({a}, {x})")),
    Function("ARRAY_DISTINCT", 1, 1, _arrays("array_distinct({0})")),
    Function("ARRAY_REVERSE", 1, 1, _arrays("reverse({0})", compared=False)),
    Function("ARRAY_MAX", 1, 1, _arrays("array_max({0})")),
    Function("ARRAY_MIN", 1, 1, _arrays("array_min({0})")),
    Function("ARRAY_UNION", 2, 2, _arrays("array_union({0}, {1})")),
    Function("ARRAY_EXCEPT", 2, 2, _arrays("array_except({0}, {1})")),
    Function("ARRAY_INTERSECT", 2, 2, _arrays("array_intersect({0}, {1})")),
    Function("ARRAY_CONCAT", 1, None, _arrays("concat({all})", compared=False)),
    Function("ARRAY_SLICE", 2, 3, _slice),
    Function("ARRAY_SORT", 1, 3, _sort),
    Function("ARRAY_JOIN", 2, 3, _join),
    Function("ELEMENT", 1, 1, _element),
    Function("MAP_KEYS", 1, 1, _of_map("map_keys({})")),
    Function("MAP_VALUES", 1, 1, _of_map("map_values({})")),
    Function("MAP_ENTRIES", 1, 1, _map_entries),
    Function("MAP_UNION", 2, None, _map_union),
    Function("MAP_FROM_ARRAYS", 2, 2, _map_from_arrays),
    Function("SPLIT", 2, 2, _split),
]
