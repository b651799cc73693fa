"""The whitelist: every node of a parsed query is a construct twinflow handles, or the query is
refused with the construct's name and line. A new sqlglot version or an unusual query can add
nodes or arguments the planner has never seen; they land here, not in a silent reading.

``ALLOWED`` lists, per sqlglot class, the arguments twinflow reads (a node of an unlisted class,
or with an unlisted argument set, is refused); function calls are checked against the catalog
(``sql/functions/``). Type-dependent rules come later, when an expression is rendered
(``sql/expressions.py``). ``rewrite_filters`` then turns ``agg(x) FILTER (WHERE c)`` into
``agg(CASE WHEN c THEN x END)`` (exact: every aggregate twinflow runs skips NULLs).
"""

from __future__ import annotations

from collections.abc import Collection

from sqlglot import exp

from operators_lib.sql.functions import (
    AGGREGATES,
    FUNCTIONS,
    RANKING,
    Unsupported,
    function_call,
)
from operators_lib.sql.reserved import reserved_message

_BINARY = {"this", "expression"}
_QUERY_CLAUSES = {"expressions", "from_", "joins", "where", "group", "having", "windows",
                  # refused by the planner with their own messages:
                  "order", "limit", "distinct", "with_", "qualify", "laterals", "offset"}

# class -> the arguments twinflow reads. Arguments set to something else are refused.
ALLOWED: dict[type, set[str]] = {
    # query structure
    exp.Select: _QUERY_CLAUSES, exp.Union: {"this", "expression", "distinct"},
    exp.Intersect: {"this", "expression", "distinct"},
    exp.Except: {"this", "expression", "distinct"},
    exp.Subquery: {"this", "alias"},
    exp.With: {"expressions"}, exp.CTE: {"this", "alias"}, exp.From: {"this"}, exp.Where: {"this"},
    exp.Having: {"this"}, exp.Group: {"expressions"}, exp.Join: {"this", "on", "side", "kind",
                                                                "using"},
    # GROUP BY GROUPING SETS / ROLLUP / CUBE (sql/grouping_sets.py)
    exp.GroupingSets: {"expressions"}, exp.Rollup: {"expressions"}, exp.Cube: {"expressions"},
    exp.Table: {"this", "alias", "version"}, exp.TableAlias: {"this", "columns"},
    exp.Lateral: {"this", "alias"},  # LATERAL TABLE(f(..)): a Python table function
    exp.Alias: {"this", "alias"},
    exp.Version: {"this", "kind", "expression"},  # FOR SYSTEM_TIME AS OF (sql/joins.py)
    exp.Tuple: {"expressions"},  # (a, b) IN (SELECT x, y ..) only (_check_node)
    exp.Identifier: {"this", "quoted"}, exp.Star: set(), exp.Exists: {"this"},
    exp.Order: {"expressions"}, exp.Ordered: {"this", "desc", "nulls_first"},
    exp.Distinct: {"expressions"}, exp.Limit: {"expression"},
    # aggregates and OVER windows (planned by sql/aggregate.py, sql/over.py, sql/topn.py)
    exp.Count: {"this", "big_int"}, exp.Sum: {"this"}, exp.Avg: {"this"}, exp.Min: {"this"},
    exp.Max: {"this"}, exp.RowNumber: set(), exp.Rank: set(), exp.DenseRank: set(),
    exp.AnonymousAggFunc: {"this", "expressions"},  # STDDEV_POP, LISTAGG, .. (sql/dialect.py)
    exp.Filter: _BINARY,
    exp.Window: {"this", "partition_by", "order", "spec", "alias", "over"},
    exp.WindowSpec: {"kind", "start", "start_side", "end", "end_side"},
    # scalar expressions
    exp.Column: {"this", "table"}, exp.Literal: {"this", "is_string"}, exp.Null: set(),
    exp.Boolean: {"this"}, exp.Paren: {"this"}, exp.Neg: {"this"}, exp.Not: {"this"},
    exp.Add: _BINARY, exp.Sub: _BINARY, exp.Mul: _BINARY, exp.Div: {"this", "expression",
                                                                   "typed", "safe"},
    exp.Mod: _BINARY, exp.EQ: _BINARY, exp.NEQ: _BINARY, exp.LT: _BINARY, exp.LTE: _BINARY,
    exp.GT: _BINARY, exp.GTE: _BINARY, exp.NullSafeEQ: _BINARY,
    exp.NullSafeNEQ: _BINARY, exp.And: _BINARY,
    exp.Or: _BINARY, exp.Is: _BINARY, exp.DPipe: {"this", "expression", "safe"},
    exp.Like: {"this", "expression", "negate"}, exp.Escape: _BINARY, exp.SimilarTo: _BINARY,
    exp.In: {"this", "expressions", "query"}, exp.Between: {"this", "low", "high"},
    exp.Case: {"this", "ifs", "default"}, exp.If: {"this", "true", "false"},
    exp.Interval: {"this", "unit"}, exp.Var: {"this"},
    exp.DataType: {"this", "expressions", "nested"}, exp.DataTypeParam: {"this"},
    # function calls (their names are checked against the catalog)
    exp.Anonymous: {"this", "expressions"}, exp.Kwarg: _BINARY, exp.Cast: {"this", "to"},
    exp.TryCast: {"this", "to", "safe"}, exp.Extract: _BINARY,
    exp.Trim: {"this", "expression", "position"}, exp.Substring: {"this", "start", "length"},
    exp.Floor: {"this", "to"}, exp.Ceil: {"this", "to"},
    exp.Overlay: {"this", "expression", "from_", "for_"}, exp.StrPosition: {"this", "substr"},
    # ARRAY[..] and a[i] / m[k] (MAP[..] is a call: sql/dialect.py)
    exp.Array: {"expressions"}, exp.Bracket: {"this", "expressions"},
    exp.JSON: {"this"},  # s IS [NOT] JSON [VALUE | SCALAR | ARRAY | OBJECT]
}

# Time windows: group windows and their bounds, window TVFs (sql/windows.py).
WINDOW_SYNTAX = {"TUMBLE", "HOP", "CUMULATE", "SESSION", "TABLE", "DESCRIPTOR", "PARTITION_BY",
                 *(f"{w}_{part}" for w in ("TUMBLE", "HOP", "SESSION")
                   for part in ("START", "END", "ROWTIME", "PROCTIME"))}

# Friendlier names for what a query may contain but twinflow does not run.
_ARG_MESSAGES = {
    (exp.Table, "sample"): "TABLESAMPLE is not supported",
    (exp.Table, "db"): "qualified table names (catalog.db.table) are not supported",
    (exp.Table, "catalog"): "qualified table names (catalog.db.table) are not supported",
    (exp.Table, "pivots"): "PIVOT / UNPIVOT is not supported",
    (exp.Table, "hints"): "table hints are not supported",
    (exp.Select, "hint"): "query hints (/*+ .. */) are not supported",
    (exp.Select, "kind"): "SELECT AS STRUCT / VALUE is not supported",
    (exp.Group, "rollup"): "GROUP BY ROLLUP is not supported",
    (exp.Group, "cube"): "GROUP BY CUBE is not supported",
    (exp.Group, "grouping_sets"): "GROUPING SETS are not supported",
    (exp.Join, "method"): "NATURAL joins are not supported",
    (exp.Column, "db"): "qualified column names (db.table.column) are not supported",
    (exp.Star, "except"): "SELECT * EXCEPT is not supported",
    (exp.Star, "replace"): "SELECT * REPLACE is not supported",
}
_CLASS_MESSAGES = {
    exp.Unnest: "UNNEST is not supported",
    exp.MatchRecognize: "MATCH_RECOGNIZE is not supported",
    exp.Values: "VALUES is not supported",
    exp.CurrentTimestamp: "CURRENT_TIMESTAMP is not supported (not deterministic)",
    exp.CurrentDate: "CURRENT_DATE is not supported (not deterministic)",
    exp.ILike: "ILIKE is not supported",
    exp.RegexpLike: "RLIKE / REGEXP is not supported",
    exp.Lambda: "lambda functions are not supported",
    exp.Dot: "field access (a.b.c) is not supported",
}
_INTERVAL_UNITS = {"SECOND", "MINUTE", "HOUR", "DAY"}
# Functions of Flink's catalog twinflow refuses by name: no run could equal Flink's.
_REFUSED_FUNCTIONS = {
    **{name: f"{name} is not supported (not deterministic)"
       for name in ("NOW", "RAND", "RAND_INTEGER", "UUID", "CURRENT_ROW_TIMESTAMP")},
    "CURRENT_WATERMARK": "CURRENT_WATERMARK is not supported (its value depends on when "
                         "watermarks arrive)",
    "COLLECT": "COLLECT is not supported (it gives a MULTISET, which twinflow does not have)",
    "JSON_OBJECTAGG": "JSON_OBJECTAGG is not supported yet (its keys in Java's String order, "
                      "and Flink's job failing when a row brings a key its group holds)",
    # a form sql/dialect.py does not rewrite to LISTAGG (OVER: refused above, as by Flink)
    "JSON_ARRAYAGG": "JSON_ARRAYAGG takes one value",
}


def _set(value) -> bool:
    return value not in (None, False, "", [])


def check(node: exp.Expression, functions: Collection[str] = ()) -> None:
    """Raise ``Unsupported`` for the first node twinflow does not handle; ``functions``: the
    user-defined functions' names (lower case)."""
    for n in node.walk():
        allowed = ALLOWED.get(type(n))
        if allowed is None:
            message = next((m for cls, m in _CLASS_MESSAGES.items() if isinstance(n, cls)),
                           None)
            raise Unsupported(message or f"{_describe(n)} is not supported", n)
        for arg, value in n.args.items():
            if arg not in allowed and _set(value):
                message = _ARG_MESSAGES.get((type(n), arg))
                raise Unsupported(message or f"{arg.upper()} in {_describe(n)} is not "
                                  "supported", n)
        _check_node(n, functions)


def _check_node(n: exp.Expression, functions: Collection[str]) -> None:
    call = function_call(n)
    if isinstance(n, exp.Identifier) and not n.quoted and (word := reserved_message(n.name)):
        raise Unsupported(word, n)
    if isinstance(n, exp.TableAlias) and n.args.get("columns") and not isinstance(
            n.parent, exp.Lateral):
        raise Unsupported("column aliases in FROM (t AS x(a, b)) are not supported", n)
    if isinstance(n, exp.Lateral) and not _table_call(n, functions):
        raise Unsupported("LATERAL is supported as LATERAL TABLE(f(..)), f a Python table "
                          "function (CREATE FUNCTION .. LANGUAGE PYTHON), or as a temporal "
                          "table function, LATERAL TABLE (versioned(left.time))", n)
    if call is not None:
        name, args = call
        if name.lower() in functions or name == "TABLE" and isinstance(n.parent, exp.Lateral):
            return  # a UDF's arguments and place are checked by the planner (sql/python_udfs.py)
        _check_call(n, name, args)
    elif isinstance(n, exp.Window) and isinstance(n.this, exp.Filter):
        raise Unsupported("FILTER (WHERE ..) with OVER is not supported (Flink refuses it too)",
                          n)
    elif isinstance(n, exp.Filter) and not isinstance(n.this, exp.AggFunc):
        raise Unsupported("FILTER (WHERE ..) applies to aggregates (COUNT, SUM, ..)", n)
    elif isinstance(n, exp.AnonymousAggFunc):
        most = 2 if n.name.upper() == "LISTAGG" else 1
        if not 1 <= len(n.expressions) <= most:
            takes = "1 or 2 arguments" if most == 2 else "one argument"
            raise Unsupported(f"{n.name.upper()} takes {takes}, got {len(n.expressions)}", n)
    elif isinstance(n, exp.Tuple) and not (isinstance(n.parent, exp.In) and n.parent.this is n
                                           and n.parent.args.get("query") is not None) and not (
            isinstance(n.parent, (exp.GroupingSets, exp.Rollup, exp.Cube))):
        raise Unsupported("a row value (a, b) is only supported before IN (SELECT ..) and as "
                          "a grouping set", n)
    elif isinstance(n, exp.Interval):
        unit = n.args.get("unit")
        if unit is None or unit.name.upper().rstrip("S") not in _INTERVAL_UNITS:
            raise Unsupported(f"interval {n.sql()}: only SECOND, MINUTE, HOUR and DAY "
                              "intervals are supported", n)
    elif isinstance(n, exp.Kwarg) and not (isinstance(n.parent, exp.Anonymous) and
                                           n.parent.name.upper() in ("TUMBLE", "HOP", "CUMULATE",
                                                                     "SESSION")):
        raise Unsupported("named arguments (=>) are only supported in window TVFs", n)
    elif isinstance(n, exp.Var) and not _unit_position(n):
        raise Unsupported(f"{n.name} is not supported here", n)


def _check_call(n: exp.Expression, name: str, args: list) -> None:
    function = FUNCTIONS.get(name)
    if function is None:
        if name in WINDOW_SYNTAX:
            return  # placed and checked by the planner (sql/windows.py)
        if name == "PROCTIME" and not args and proctime_item(n):
            return  # a processing-time attribute made by the query (sql/planner.py)
        if name in ("GROUPING", "GROUPING_ID") and args or name == "GROUP_ID" and not args:
            return  # constants of each grouping set (sql/grouping_sets.py)
        if name == "GROUP_ID":
            raise Unsupported(f"GROUP_ID takes no arguments, got {len(args)}", n)
        if name == "PROCTIME":
            raise Unsupported("PROCTIME() is supported as a computed column (x AS PROCTIME()) "
                              "or as an item of a SELECT list over one table", n)
        if name in ("LAG", "LEAD") and isinstance(n.parent, exp.Window):
            # Measured on Flink 2.3: its streaming mode fails on LEAD, and its streaming LAG
            # answers rows of equal time with the state after all of them (its batch LAG not).
            raise Unsupported(f"{name}() OVER is not supported yet (Flink's streaming mode has "
                              "no LEAD, and its LAG answers rows of equal time unlike its batch "
                              "mode)", n)
        if isinstance(n.parent, exp.Window):
            over = [a for a in AGGREGATES if a != "LISTAGG"]
            raise Unsupported(f"{name}() OVER is not supported (supported: "
                              f"{', '.join(over + list(RANKING))})", n)
        if name in _REFUSED_FUNCTIONS:
            raise Unsupported(_REFUSED_FUNCTIONS[name], n)
        if name in AGGREGATES:  # an aggregate in a form sqlglot did not recognize
            raise Unsupported(f"{name} with {len(args)} arguments is not supported", n)
        raise Unsupported(f"unknown or unsupported function {name} (twinflow runs the Flink "
                          "built-in functions of its catalog, and Python functions declared "
                          "with CREATE FUNCTION .. LANGUAGE PYTHON)", n)
    if any(a is None for a in args) or len(args) < function.min_args or (
            function.max_args is not None and len(args) > function.max_args):
        most = "any number of" if function.max_args is None else str(function.max_args)
        raise Unsupported(f"{name} takes {function.min_args} to {most} arguments, got "
                          f"{len([a for a in args if a is not None])}", n)


def _table_call(n: exp.Lateral, functions: Collection[str]) -> bool:
    """Is ``n`` ``LATERAL TABLE(f(..))`` of a declared function f?"""
    table = n.this
    return isinstance(table, exp.Anonymous) and table.name.upper() == "TABLE" and len(
        table.expressions) == 1 and isinstance(table.expressions[0], exp.Anonymous) and \
        table.expressions[0].name.lower() in functions


def proctime_item(n: exp.Expression) -> bool:
    """Is ``n`` a SELECT list item (``PROCTIME() [AS name]``)?"""
    item = n.parent if isinstance(n.parent, exp.Alias) else n
    return isinstance(item.parent, exp.Select) and item.arg_key == "expressions"


def _unit_position(n: exp.Var) -> bool:
    """A Var is only a unit keyword: EXTRACT(u ..), FLOOR(.. TO u), TIMESTAMPADD(u, ..),
    INTERVAL '1' u, or a window frame bound (UNBOUNDED, CURRENT ROW)."""
    parent = n.parent
    return isinstance(parent, (exp.Extract, exp.Floor, exp.Ceil, exp.Interval, exp.WindowSpec,
                               exp.Anonymous, exp.Kwarg))


def _describe(n: exp.Expression) -> str:
    text = n.sql(dialect="spark")
    text = text if len(text) <= 60 else text[:57] + "..."
    return f"{type(n).__name__.upper()} ({text})"


def rewrite_filters(node: exp.Expression) -> exp.Expression:
    """``agg(x) FILTER (WHERE c)`` -> ``agg(CASE WHEN c THEN x END)``; ``COUNT(*)`` counts
    ``CASE WHEN c THEN 1 END``; ``agg(DISTINCT x)`` becomes ``agg(DISTINCT CASE ..)``."""
    def rewrite(n: exp.Expression) -> exp.Expression:
        if not isinstance(n, exp.Filter):
            return n
        agg, cond = n.this.copy(), n.expression.this

        def when(value: exp.Expression) -> exp.Expression:
            return exp.Case(ifs=[exp.If(this=cond.copy(), true=value)])

        named = isinstance(agg, exp.AnonymousAggFunc)  # LISTAGG(x, sep): x only
        arg = agg.expressions[0] if named else agg.this
        if named:
            agg.set("expressions", [when(arg.copy()), *agg.expressions[1:]])
        elif isinstance(arg, exp.Star):
            agg.set("this", when(exp.Literal.number(1)))
        elif isinstance(arg, exp.Distinct):
            arg.set("expressions", [when(e) for e in arg.expressions])
        else:
            agg.set("this", when(arg))
        agg.meta.update(n.meta or {})
        return agg

    return node.transform(rewrite) if node.find(exp.Filter) else node
