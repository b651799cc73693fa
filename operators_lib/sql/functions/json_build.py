"""Writing JSON: JSON_STRING, JSON_OBJECT and JSON_ARRAY as Flink 2.3 writes them (Jackson
over value nodes, JsonGenerateUtils): compact, an object's keys sorted (Java's String order,
nested ones too) with the last value of a repeated key, strings escaped as Jackson does, an
integer or BOOLEAN as its Java text, a DECIMAL, DOUBLE or FLOAT as BigDecimal prints it
(1.0E+300, 0.10000000149011612; NaN and the infinities as strings), a table's TIMESTAMP column
in ISO form without trailing fraction zeros (a TIMESTAMP_LTZ with a Z; a computed timestamp is
refused: twinflow does not know which of the two Flink has), an ARRAY or a MAP (keys sorted) as
JSON with null elements. A JSON_OBJECT or JSON_ARRAY call as a value is JSON, not a string.
A JSON_OBJECT's NULL value is null (NULL ON NULL, the default) or absent; a JSON_ARRAY's is
absent (ABSENT ON NULL, the default) or null.

Flink also inserts a view's or subquery's JSON_OBJECT / JSON_ARRAY column as JSON where its
planner merges the projections, and as a string where it does not: such a column as a value is
refused (``Field.origin``, set by sql/planner.py).
"""

from __future__ import annotations

from sqlglot import exp

from operators_lib.sql.functions.base import NULL_TYPE, Call, Function
from operators_lib.sql.functions.json_text import decimal_text, let, q
from operators_lib.types import FlinkType

_BUILDERS = ("JSON_OBJECT", "JSON_ARRAY")
_FIELD = r'(?s)^[{]"v":(.*)[}]$'  # the value in to_json's {"v":..}


def builds_json(node: exp.Expression) -> bool:
    """Is ``node`` a JSON_OBJECT or JSON_ARRAY call (whose result Flink nests as JSON)? Both
    parse as plain calls (sql/json_syntax.py)."""
    return isinstance(node, exp.Anonymous) and node.name.upper() in _BUILDERS


def jackson_string(text: str) -> str:
    """``text`` as a JSON string written by Jackson: quotes, backslashes and control
    characters escaped (\\b \\t \\n \\f \\r, else \\u00XX), nothing else."""
    short = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f",
             "\r": "\\r"}
    return '"' + "".join(short.get(ch) or (f"\\u{ord(ch):04X}" if ord(ch) < 0x20 else ch)
                         for ch in text) + '"'


def _of(c: Call, x: str, t: FlinkType, depth: int = 0) -> str:
    """The JSON of the value ``x`` of type ``t``; NULL where it is NULL."""
    if t.name == "STRING":  # Spark's to_json escapes as Jackson does (cases functions/json_*)
        return f"nullif(regexp_extract(to_json(named_struct('v', {x})), {q(_FIELD)}, 1), '')"
    if t.is_integral or t.name == "BOOLEAN":
        return f"CAST({x} AS STRING)"
    if t.name == "DECIMAL":
        return let(f"CAST({x} AS STRING)", decimal_text)
    if t.is_floating:
        return let(f"CAST({x} AS DOUBLE)", lambda d: (
            f"CASE WHEN isnan({d}) THEN '\"NaN\"' WHEN {d} = double('Infinity') THEN "
            f"'\"Infinity\"' WHEN {d} = double('-Infinity') THEN '\"-Infinity\"' "
            f"ELSE {decimal_text(f'CAST({d} AS STRING)')} END"))
    if t.name in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        zone = "Z" if t.name == "TIMESTAMP_LTZ" else ""
        return (f"concat('\"', date_format({x}, \"yyyy-MM-dd'T'HH:mm:ss\"), "
                f"regexp_replace(date_format({x}, '.SSSSSS'), '[.]?0+$', ''), '{zone}\"')")
    e = f"je{depth}"
    if t.name == "ARRAY":
        element = _of(c, e, t.args[0], depth + 1)
        return (f"concat('[', array_join(transform({x}, {e} -> coalesce({element}, 'null')), "
                "','), ']')")
    if t.name == "MAP" and t.args[0].name == "STRING":
        value = _of(c, f"{e}.e.value", t.args[1], depth + 1)
        key = _of(c, f"{e}.e.key", t.args[0], depth + 1)
        entries = (f"sort_array(transform(map_entries({x}), {e} -> named_struct('k', "
                   f"encode({e}.key, 'UTF-16BE'), 'e', {e})))")  # Java's String order
        return (f"concat('{{', array_join(transform({entries}, {e} -> concat({key}, ':', "
                f"coalesce({value}, 'null'))), ','), '}}')")
    raise c.reject(f"{c.name} of a {t.sql()} is not supported (Flink writes no DATE or TIME, "
                   "and names a ROW's fields as twinflow does not)")


def _value(c: Call, i: int) -> str:
    """The JSON of argument ``i``: a JSON_OBJECT / JSON_ARRAY call's text as it is."""
    a = c.args[i]
    if builds_json(a):
        return c.sql[i]
    origin = c.env.origins.get(a.name) if isinstance(a, exp.Column) else None
    if origin == "json":
        raise c.reject(f"{c.name} of the column {a.name}, a JSON_OBJECT or JSON_ARRAY of a view "
                       "or subquery, is not supported (Flink inserts it as JSON or as a string "
                       "depending on how its planner merges the projections); write the call "
                       "in place")
    t = c.type(i)
    if t == NULL_TYPE:
        raise c.reject(f"{c.name} of an untyped NULL (Flink refuses it): CAST it to a type")
    if _holds_timestamp(t) and origin != "table":
        raise c.reject(f"{c.name} of a computed timestamp is not supported (twinflow types it "
                       "TIMESTAMP(3) where Flink's may be a TIMESTAMP_LTZ, which it writes with "
                       "a Z); a table's TIMESTAMP or TIMESTAMP_LTZ column is")
    return _of(c, c.sql[i], t)


def _holds_timestamp(t: FlinkType) -> bool:
    return t.is_timestamp or any(_holds_timestamp(a) for a in t.args)


def _on_null(c: Call, default: str) -> tuple[list[int], str]:
    """(the value arguments' indexes, NULL or ABSENT)."""
    last = c.args[-1] if c.args else None
    if isinstance(last, exp.Var):
        return list(range(len(c.args) - 1)), last.name.split()[0]
    return list(range(len(c.args))), default


def _json_string(c: Call) -> str:
    return _value(c, 0)


def _json_array(c: Call) -> str:
    indexes, on_null = _on_null(c, "ABSENT")
    items = [_value(c, i) for i in indexes]
    if on_null == "NULL":
        items = [f"coalesce({v}, 'null')" for v in items]
    return f"concat('[', concat_ws(',', {', '.join(items)}), ']')" if items else "'[]'"


def _json_object(c: Call) -> str:
    indexes, on_null = _on_null(c, "NULL")
    values: dict[str, list[str]] = {}
    for k, v in zip(indexes[::2], indexes[1::2]):
        values.setdefault(c.string(k, "key"), []).append(_value(c, v))
    entries = []
    for key in sorted(values, key=lambda k: k.encode("utf-16-be")):  # Java's String order
        # The last value counts; ABSENT ON NULL skips NULL ones.
        value = f"coalesce({', '.join(reversed(values[key]))})" if on_null == "ABSENT" \
            else f"coalesce({values[key][-1]}, 'null')"
        entries.append(f"concat({q(jackson_string(key) + ':')}, {value})")
    return f"concat('{{', concat_ws(',', {', '.join(entries)}), '}}')" if entries else "'{}'"


FUNCTIONS = [
    Function("JSON_STRING", 1, 1, _json_string),
    Function("JSON_OBJECT", 0, None, _json_object),
    Function("JSON_ARRAY", 0, None, _json_array),
]
