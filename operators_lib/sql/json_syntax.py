"""Flink's JSON function syntax for sqlglot: JSON_VALUE, JSON_QUERY, JSON_EXISTS, JSON_OBJECT,
JSON_ARRAY, JSON_OBJECTAGG and JSON_ARRAYAGG with their clauses, in Flink's order. Each call
stays a plain call (``exp.Anonymous``, sql/dialect.py) whose arguments are its expressions, each
clause an ``exp.Var`` naming it (``RETURNING INT``, ``DEFAULT ON EMPTY`` followed by the
default's expression, ``WITH CONDITIONAL ARRAY WRAPPER``, ``ABSENT ON NULL``): the catalog
(sql/functions/json_*.py) decides what they mean, and refuses what it does not reproduce
(JSON_ARRAYAGG: rewritten to LISTAGG by sql/dialect.py).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp
from sqlglot.parser import Parser
from sqlglot.tokens import TokenType

Clause = list[exp.Expression]


def _behavior(p: Parser, on: str, words: tuple[tuple[str, ...], ...],
              default: bool = False) -> Clause:
    """``<behavior> ON <on>``: one of ``words``, or ``DEFAULT expr`` where ``default``."""
    for w in words:
        if p._match_text_seq(*w, "ON", on):
            return [exp.Var(this=f"{' '.join(w)} ON {on}")]
    index = p._index
    if default and p._match(TokenType.DEFAULT):
        value = p._parse_bitwise()
        if value is not None and p._match_text_seq("ON", on):
            return [exp.Var(this=f"DEFAULT ON {on}"), value]
        p._retreat(index)
    return []


def _input(p: Parser) -> Clause:
    """``json, path``."""
    json = p._parse_assignment()
    if not p._match(TokenType.COMMA):
        p.raise_error("Expecting , and a JSON path")
    return [json, p._parse_assignment()]


def _returning(p: Parser) -> Clause:
    if not p._match(TokenType.RETURNING):
        return []
    to = p._parse_types()
    if to is None:
        p.raise_error("Expecting a type after RETURNING")
    return [exp.Var(this=f"RETURNING {to.sql(dialect='spark').upper()}")]


def _json_value(p: Parser) -> exp.Expression:
    words = (("NULL",), ("ERROR",))
    return _call(p, "JSON_VALUE", _input(p) + _returning(p)
                 + _behavior(p, "EMPTY", words, default=True)
                 + _behavior(p, "ERROR", words, default=True))


_WRAPPERS = (("WITHOUT", "ARRAY", "WRAPPER"), ("WITHOUT", "WRAPPER"),
             ("WITH", "CONDITIONAL", "ARRAY", "WRAPPER"), ("WITH", "CONDITIONAL", "WRAPPER"),
             ("WITH", "UNCONDITIONAL", "ARRAY", "WRAPPER"), ("WITH", "UNCONDITIONAL", "WRAPPER"),
             ("WITH", "ARRAY", "WRAPPER"), ("WITH", "WRAPPER"))


def _json_query(p: Parser) -> exp.Expression:
    args = _input(p) + _returning(p)
    wrapper = next((w for w in _WRAPPERS if p._match_text_seq(*w)), None)
    if wrapper:
        args.append(exp.Var(this=" ".join(wrapper)))
    words = (("NULL",), ("ERROR",), ("EMPTY", "ARRAY"), ("EMPTY", "OBJECT"))
    return _call(p, "JSON_QUERY", args + _behavior(p, "EMPTY", words)
                 + _behavior(p, "ERROR", words))


def _json_exists(p: Parser) -> exp.Expression:
    words = (("TRUE",), ("FALSE",), ("UNKNOWN",), ("ERROR",))
    return _call(p, "JSON_EXISTS", _input(p) + _behavior(p, "ERROR", words))


def _on_null(p: Parser) -> Clause:
    return _behavior(p, "NULL", (("NULL",), ("ABSENT",)))


def _constructor(name: str, item: Callable[[Parser], Clause]) -> Callable[[Parser], exp.Expression]:
    """``name([item, ..] [NULL | ABSENT ON NULL])``."""
    def parse(p: Parser) -> exp.Expression:
        args: Clause = []
        if not p._match(TokenType.R_PAREN, advance=False) and not (
                p._match_text_seq("NULL", "ON", "NULL", advance=False)
                or p._match_text_seq("ABSENT", "ON", "NULL", advance=False)):
            args = item(p)
            while p._match(TokenType.COMMA):
                args += item(p)
        return _call(p, name, args + _on_null(p))
    return parse


def _key_value(p: Parser) -> Clause:
    """``[KEY] key VALUE value``."""
    p._match_text_seq("KEY")
    key = p._parse_bitwise()
    if not p._match_text_seq("VALUE"):
        p.raise_error("Expecting VALUE after a JSON_OBJECT key")
    return [key, p._parse_assignment()]


def _call(p: Parser, name: str, args: Clause) -> exp.Expression:
    if not p._match(TokenType.R_PAREN, advance=False):
        p.raise_error(f"Expecting ) to end {name}")
    return exp.Anonymous(this=name, expressions=args)


FUNCTION_PARSERS = {
    "JSON_VALUE": _json_value,
    "JSON_QUERY": _json_query,
    "JSON_EXISTS": _json_exists,
    "JSON_OBJECT": _constructor("JSON_OBJECT", _key_value),
    "JSON_ARRAY": _constructor("JSON_ARRAY", lambda p: [p._parse_assignment()]),
    "JSON_OBJECTAGG": _constructor("JSON_OBJECTAGG", _key_value),
    "JSON_ARRAYAGG": _constructor("JSON_ARRAYAGG", lambda p: [p._parse_assignment()]),
}
