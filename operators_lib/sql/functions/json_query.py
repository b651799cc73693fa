"""Reading JSON: JSON_VALUE, JSON_QUERY, JSON_EXISTS and ``s IS [NOT] JSON [VALUE | SCALAR |
ARRAY | OBJECT]``, as Flink 2.3 (SqlJsonUtils over Jayway JsonPath) answers them.

A path is ``[lax | strict] $`` followed by ``.name``, ``['name']`` and ``[index]`` steps (a
literal; wildcards, filters, negative indexes and functions are refused). Without a mode it is
strict. The outcome of a path over a text, and which clause answers it:
- a NULL text: NULL (IS JSON: FALSE);
- an invalid text: empty in lax mode, an error in strict mode (JSON_EXISTS: FALSE in lax);
- the text ``null`` (Jayway takes no null document): an error in both modes;
- a step that finds nothing, or a JSON null at the end: empty in lax mode, an error in strict;
- else the value; JSON_VALUE needs a scalar and JSON_QUERY (after its wrapper) an array or an
  object, else: empty in lax mode, an error in strict.
"Empty" and "error" are the ON EMPTY / ON ERROR clauses (default NULL; JSON_EXISTS: FALSE ON
ERROR, and TRUE where something is found); ERROR fails the job (exit 2).
"""

from __future__ import annotations

import re

from sqlglot import exp

from operators_lib.sql.functions.base import Call, Function, _string, data_error
from operators_lib.sql.functions.json_text import document, let, literal, numbers, q, unread

_MODE = re.compile(r"^[ \t\n\x0b\f\r]*(strict|lax)[ \t\n\x0b\f\r]+(.+)$",
                   re.IGNORECASE | re.DOTALL)  # Flink's (SqlJsonUtils.JSON_PATH_BASE)
_STEP = re.compile(r"\.([\w-]+)|\['([^'\\]*)'\]|\[\"([^\"\\]*)\"\]|\[([0-9]{1,9})\]")


def _path(c: Call) -> tuple[bool, str]:
    """(lax, the path in Spark's variant syntax) of the path argument."""
    spec = c.string(1, "JSON path")
    m = _MODE.match(spec)
    lax, path = (m.group(1).lower() == "lax", m.group(2)) if m else (False, spec)
    steps, at = [], 1
    while path.startswith("$") and at < len(path):
        step = _STEP.match(path, at)
        if step is None:
            break
        name, quoted, double, index = step.groups()
        key = name if name is not None else quoted if quoted is not None else double
        steps.append(f"[{index}]" if index is not None else
                     f"['{key}']" if "'" not in key else f'["{key}"]')
        at = step.end()
    if not path.startswith("$") or at < len(path):
        raise c.reject(f"{c.name} with the path {spec!r} is not supported (twinflow runs paths "
                       "of $ and .name, ['name'] and [index] steps, after lax or strict)")
    return lax, "$" + "".join(steps)


def _clauses(c: Call) -> dict[str, str]:
    """The call's clauses (sql/json_syntax.py): ``{'ON EMPTY': 'NULL' | 'ERROR' | 'DEFAULT' |
    .., 'ON ERROR': .., 'RETURNING': type, 'WRAPPER': ..}``; a DEFAULT's expression follows
    its clause among the arguments."""
    out = {}
    for a in c.args[2:]:
        if isinstance(a, exp.Var):
            text = a.name
            if text.startswith("RETURNING "):
                out["RETURNING"] = text.removeprefix("RETURNING ")
            elif text.endswith("WRAPPER"):
                out["WRAPPER"] = text
            else:
                behavior, on = text.rsplit(" ON ", 1)
                out[f"ON {on}"] = behavior
    return out


def _default(c: Call, on: str) -> int:
    """The argument index of the DEFAULT .. ON ``on`` expression."""
    return next(i + 1 for i, a in enumerate(c.args)
                if isinstance(a, exp.Var) and a.name == f"DEFAULT ON {on}")


def _located(c: Call, vpath: str, body) -> str:
    """``body(d, r)``: ``d`` the document (json_text.document) of the text argument, ``r`` a
    struct of the value at ``vpath`` (``v``, a variant; ``j``, its JSON)."""
    def at(d: str) -> str:
        value = f"{d}.v" if vpath == "$" else f"variant_get({d}.v, {q(vpath)})"
        return let(f"named_struct('v', {value}, 'j', to_json({value}))", lambda r: body(d, r))
    return let(document(c.sql[0]), at)


def _outcomes(d: str, r: str, lax: bool, empty: str, error: str) -> str:
    """The CASE branches up to a found value (module docstring)."""
    missing = empty if lax else error
    return (f"WHEN {d}.s IS NULL THEN NULL WHEN NOT {d}.ok THEN {missing} "
            f"WHEN is_variant_null({d}.v) THEN {error} "
            f"WHEN {r}.v IS NULL OR is_variant_null({r}.v) THEN {missing}")


# JSON_VALUE's RETURNING types, each with the values Flink's generated code casts to it (a JSON
# integer in an int's range, a JSON number with a fraction or exponent, a JSON boolean); any
# other value fails the job (Java's ClassCastException). Flink refuses other types.
_RETURNING = {"STRING": "string", "INT": "int", "DOUBLE": "double", "BOOLEAN": "boolean"}


def _returning(c: Call) -> tuple[str, str]:
    """(Flink's name, Spark's type) of JSON_VALUE's RETURNING type."""
    to = _clauses(c).get("RETURNING", "STRING")
    name = "STRING" if re.fullmatch(r"(VARCHAR|STRING)(\(\d+\))?", to) else to
    if name not in _RETURNING:
        raise c.reject(f"JSON_VALUE .. RETURNING {to} is not supported (Flink 2.3 returns "
                       "STRING, VARCHAR(n), INT, DOUBLE or BOOLEAN)")
    return name, _RETURNING[name]


def _behavior(c: Call, on: str, spark_type: str, words: dict[str, str]) -> str:
    """The SQL of ``on``'s clause: one of ``words`` (default NULL), ERROR (the job fails, as
    Flink's does) or DEFAULT (a literal of the result's type)."""
    behavior = _clauses(c).get(on, "NULL")
    if behavior == "ERROR":
        what = "an empty result" if on == "ON EMPTY" else "an error"
        return data_error(f"'{c.name}: {what} (ERROR {on})'", spark_type)
    if behavior == "DEFAULT":
        i = _default(c, on.removeprefix("ON "))
        if spark_type == "double":  # Flink casts the default's Java object to a BigDecimal
            return data_error(f"'JSON_VALUE .. RETURNING DOUBLE: Flink cannot cast its DEFAULT "
                              f"{on} (a ClassCastException)'", spark_type)
        if not _literal_of(c, i, spark_type):
            raise c.reject(f"{c.name} .. DEFAULT .. {on} with anything but a literal of the "
                           f"result's type ({spark_type.upper()}) is not supported")
        return f"CAST({c.sql[i]} AS {spark_type})"
    return words[behavior]


def _literal_of(c: Call, i: int, spark_type: str) -> bool:
    a = c.args[i]
    if spark_type == "string":
        return isinstance(a, exp.Literal) and a.is_string
    if spark_type == "boolean":
        return isinstance(a, exp.Boolean)
    n = c.int_literal(i)
    return n is not None and -2 ** 31 <= n < 2 ** 31


def _double(number: str) -> str:
    """BigDecimal.doubleValue of a JSON number: a zero is 0.0, never -0.0."""
    mantissa = f"regexp_extract({number}, '^-?([0-9.]+)', 1)"
    return f"IF({mantissa} RLIKE '[1-9]', CAST({number} AS DOUBLE), 0.0D)"


def _json_value(c: Call) -> str:
    c.require(0, _string, "a string")
    lax, vpath = _path(c)
    name, spark_type = _returning(c)
    nulls = {"NULL": f"CAST(NULL AS {spark_type})"}
    empty = _behavior(c, "ON EMPTY", spark_type, nulls)
    error = _behavior(c, "ON ERROR", spark_type, nulls)

    def body(d: str, r: str) -> str:
        kind, text = f"substr({r}.j, 1, 1)", f"variant_get({r}.v, '$', 'string')"
        number = literal(text)
        cast = {"STRING": f"IF({kind} = '\"', {numbers(text)}, {r}.j)",
                "INT": f"IF({number} RLIKE '^-?[0-9]+$', try_cast({number} AS INT), NULL)",
                "DOUBLE": f"IF({number} RLIKE '[.eE]', {_double(number)}, NULL)",
                "BOOLEAN": f"IF({r}.j IN ('true', 'false'), {r}.j = 'true', NULL)"}[name]
        fail = data_error(f"concat('JSON_VALUE .. RETURNING {name}: Flink cannot cast ', {r}.j, "
                          f"' (a ClassCastException)')", spark_type)
        return (f"CASE {unread('JSON_VALUE', d, spark_type)} "
                f"{_outcomes(d, r, lax, empty, error)} "
                f"WHEN {kind} IN ('{{', '[') THEN {empty if lax else error} "
                f"ELSE coalesce({cast}, {fail}) END")
    return _located(c, vpath, body)


def _json_query(c: Call) -> str:
    c.require(0, _string, "a string")
    lax, vpath = _path(c)
    clauses = _clauses(c)
    if clauses.get("RETURNING", "STRING") != "STRING":
        raise c.reject(f"JSON_QUERY .. RETURNING {clauses['RETURNING']} is not supported "
                       "(twinflow returns STRING)")
    words = {"NULL": "CAST(NULL AS STRING)", "EMPTY ARRAY": "'[]'", "EMPTY OBJECT": "'{}'"}
    empty = _behavior(c, "ON EMPTY", "string", words)
    error = _behavior(c, "ON ERROR", "string", words)
    wrapper = clauses.get("WRAPPER", "WITHOUT ARRAY WRAPPER")

    def body(d: str, r: str) -> str:
        kind, j = f"substr({r}.j, 1, 1)", f"{r}.j"
        if wrapper.startswith("WITHOUT"):
            scalar = f"WHEN {kind} NOT IN ('{{', '[') THEN {empty if lax else error} "
            value = j
        else:
            scalar = ""
            wrapped = f"concat('[', {j}, ']')"
            value = f"IF({kind} = '[', {j}, {wrapped})" if "CONDITIONAL" in wrapper.split() \
                else wrapped
        return (f"CASE {unread('JSON_QUERY', d, 'string')} "
                f"{_outcomes(d, r, lax, empty, error)} {scalar}ELSE {numbers(value)} END")
    return _located(c, vpath, body)


def _json_exists(c: Call) -> str:
    c.require(0, _string, "a string")
    lax, vpath = _path(c)
    words = {"TRUE": "TRUE", "FALSE": "FALSE", "UNKNOWN": "CAST(NULL AS BOOLEAN)"}
    error = _clauses(c).get("ON ERROR", "FALSE")
    error = data_error("'JSON_EXISTS: an error (ERROR ON ERROR)'", "boolean") \
        if error == "ERROR" else words[error]

    def body(d: str, r: str) -> str:
        return (f"CASE {unread('JSON_EXISTS', d, 'boolean')} "
                f"{_outcomes(d, r, lax, 'FALSE', error)} ELSE TRUE END")
    return _located(c, vpath, body)


# IS JSON's kinds: the first character of a valid text past Jackson's white space.
_FIRST = r"^[ \t\n\r]*(.)"
_KINDS = {"IS JSON": None, "IS JSON VALUE": None, "IS JSON SCALAR": "NOT IN ('{', '[')",
          "IS JSON ARRAY": "= '['", "IS JSON OBJECT": "= '{'"}


def _is_json(c: Call) -> str:
    """Valid JSON to Flink (json_text's module docstring), of the kind; FALSE for NULL."""
    c.require(0, _string, "a string")
    kind = _KINDS[c.name]

    def body(d: str) -> str:
        first = f"regexp_extract({d}.s, {q(_FIRST)}, 1)"
        test = f"{d}.ok" + (f" AND {first} {kind}" if kind else "")
        return (f"CASE {unread(c.name, d, 'boolean')} WHEN {d}.s IS NULL THEN FALSE "
                f"ELSE {test} END")
    return let(document(c.sql[0]), body)


FUNCTIONS = [
    Function("JSON_VALUE", 2, None, _json_value),
    Function("JSON_QUERY", 2, None, _json_query),
    Function("JSON_EXISTS", 2, 3, _json_exists),
    *[Function(name, 1, 1, _is_json) for name in _KINDS],
]
