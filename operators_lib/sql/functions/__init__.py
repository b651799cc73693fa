"""The Flink built-in functions twinflow runs, each with how it renders to Spark SQL with Flink's
semantics. A function not in ``FUNCTIONS`` is refused (exit 2) with its name and line.

Adding a function is one ``Function`` row in its family's module (strings, patterns, codes,
numbers, temporal, nested, arrays, conversions, json_query, json_build, printf, hashmaps,
timezones; conditionals and CURRENT_DATABASE here) plus a column in an oracle case under
``tests/cases/functions/`` (expected results from real Flink). A renderer gets the call's
arguments as Flink nodes and as Spark SQL text, can ask for an argument's Flink type, and raises
``Unsupported`` for an argument form whose Flink semantics it does not reproduce.
Semantics checked against Flink 2.3 (tests/cases/functions/*): see the notes on each renderer.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from operators_lib.sql.dialect import TYPED_LITERAL
from operators_lib.sql.functions import (
    arrays,
    codes,
    conversions,
    hashmaps,
    json_build,
    json_query,
    nested,
    numbers,
    patterns,
    printf,
    strings,
    temporal,
    timezones,
)
from operators_lib.sql.functions.base import (
    NULL_TYPE,
    Call,
    Env,
    Function,
    Unsupported,
    _fmt,
)

__all__ = ["AGGREGATES", "FUNCTIONS", "NULL_TYPE", "RANKING", "Call", "Env", "Function",
           "Unsupported", "function_call"]


def _if(c: Call) -> str:
    return f"(CASE WHEN {c.sql[0]} THEN {c.sql[1]} ELSE {c.sql[2]} END)"


def _ifnull(c: Call) -> str:
    """IFNULL(x, y): y where x is NULL, in the wider type (as COALESCE); Flink refuses two
    types it cannot widen (a STRING and an INT). Numbers widen alike in both engines (not a
    FLOAT, which Spark widens to DOUBLE)."""
    a, b = c.type(0), c.type(1)
    if NULL_TYPE not in (a, b) and a != b and not (
            a.is_numeric and b.is_numeric and "FLOAT" not in (a.name, b.name)):
        raise c.reject(f"IFNULL of a {a.sql()} and a {b.sql()} is not supported (Flink takes "
                       "one type, or numbers other than FLOAT)")
    return f"coalesce({c.sql[0]}, {c.sql[1]})"


def _refused(reason: str) -> Callable[[Call], str]:
    """A function of Flink's page whose semantics twinflow does not reproduce: refused with
    the reason (measured on Flink 2.3)."""
    def render(c: Call) -> str:
        raise c.reject(f"{c.name} is not supported: {reason}")
    return render


REFUSED = [
    Function("PARSE_URL", 2, 3, _refused(
        "Flink parses with java.net.URL (known protocols only, spaces accepted, the path "
        "normalized), Spark's parse_url with java.net.URI")),
]

FUNCTIONS: dict[str, Function] = {f.name: f for f in [
    # conditionals
    Function("COALESCE", 1, None, lambda c: f"coalesce({', '.join(c.sql)})"),
    Function("IF", 3, 3, _if),
    Function("NULLIF", 2, 2, _fmt("nullif({0}, {1})")),
    Function("IFNULL", 2, 2, _ifnull),
    # the catalog: twinflow's tables live in Flink's default catalog and database
    Function("CURRENT_DATABASE", 0, 0, lambda c: "'default_database'"),
    *conversions.FUNCTIONS, *strings.FUNCTIONS, *patterns.FUNCTIONS, *codes.FUNCTIONS,
    *numbers.FUNCTIONS, *temporal.FUNCTIONS, *nested.FUNCTIONS, *arrays.FUNCTIONS,
    *json_query.FUNCTIONS, *json_build.FUNCTIONS,
    *printf.FUNCTIONS, *hashmaps.FUNCTIONS,
    *timezones.FUNCTIONS, *REFUSED,
]}

# Aggregates: planned by sql/aggregate.py and sql/over.py (COUNT, SUM, AVG, MIN, MAX, with
# DISTINCT and FILTER (WHERE ..); the statistical ones, FIRST_VALUE, LAST_VALUE and LISTAGG
# with FILTER); ranking functions by sql/topn.py.
AGGREGATES = ("COUNT", "SUM", "AVG", "MIN", "MAX", "STDDEV_POP", "STDDEV_SAMP", "STDDEV",
              "VAR_POP", "VAR_SAMP", "VARIANCE", "FIRST_VALUE", "LAST_VALUE", "LISTAGG")
RANKING = ("ROW_NUMBER", "RANK", "DENSE_RANK")


def when_of_case(node: exp.Expression) -> bool:
    """Is ``node`` a WHEN .. THEN of a CASE (sqlglot's exp.If in its ``ifs``), not a call of
    IF(c, a, b), which may be the CASE's ELSE or any other operand?"""
    return isinstance(node, exp.If) and isinstance(node.parent, exp.Case) and \
        node.arg_key == "ifs"


def function_call(node: exp.Expression) -> tuple[str, list[exp.Expression]] | None:
    """(Flink name, arguments) if ``node`` is a call of a scalar function, else None. Most calls
    are ``exp.Anonymous`` (sql/dialect.py); the special syntax has sqlglot classes."""
    if isinstance(node, exp.Anonymous):
        inner = node.expressions[0] if node.expressions else None
        if node.name.upper() == "DECODE" and len(node.expressions) == 2 and isinstance(
                inner, exp.Anonymous) and inner.name.upper() == "ENCODE" and len(
                inner.expressions) == 2:  # DECODE(ENCODE(s, a), b): s, a, b (sql/codes.py)
            return "DECODE", [*inner.expressions, node.expressions[1]]
        return node.name.upper(), list(node.expressions)
    if isinstance(node, exp.SimilarTo):
        return "SIMILAR TO", [node.this, node.expression]
    if isinstance(node, exp.Array):
        return "ARRAY", list(node.expressions)
    if isinstance(node, exp.Bracket):
        return "ITEM", [node.this, *node.expressions]
    if isinstance(node, exp.TryCast):  # a subclass of exp.Cast
        return "TRY_CAST", [node.this]
    if isinstance(node, exp.Cast):
        return ("TIMESTAMP_LITERAL" if node.meta.get(TYPED_LITERAL) else "CAST"), [node.this]
    if isinstance(node, exp.Overlay):
        return "OVERLAY", [a for a in (node.this, node.expression, node.args.get("from_"),
                                       node.args.get("for_")) if a is not None]
    if isinstance(node, exp.StrPosition) and node.args.get("position") is None:
        return "POSITION", [node.args["substr"], node.this]
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
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.JSON):
        kind = node.expression.this
        return ("IS JSON " + kind if kind else "IS JSON"), [node.this]
    if isinstance(node, exp.If) and not when_of_case(node):
        return "IF", [node.this, node.args.get("true"), node.args.get("false")]
    return None
