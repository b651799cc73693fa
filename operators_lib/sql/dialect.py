"""The Flink SQL dialect for sqlglot, and the pre-scan for what sqlglot cannot parse.

Spark's grammar (backticks, ``INTERVAL '2' MINUTE``, WINDOW clauses) parses Flink's query syntax,
with two changes so that nothing is silently read the Spark way:
- string literals as Flink's: single quotes only, ``''`` is a quote, a backslash is a backslash
  (Spark reads ``'x(\\d+)'`` as ``x(d+)``); a double quote is not Flink SQL;
- function calls keep the name they were written with (``exp.Anonymous``), so that only the
  function catalog (``sql/functions/``) decides what a name means. Exceptions: the aggregates
  and ranking functions the planner recognizes by class, the other aggregates (``STDDEV_POP``,
  ``LISTAGG``, ..: ``exp.AnonymousAggFunc`` under their written name, so that a SELECT with them
  is an aggregation), and the special syntax sqlglot parses into classes of its own (CAST,
  TRY_CAST, EXTRACT, TRIM, SUBSTRING, FLOOR/CEIL .. TO, IF).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from functools import partial

from sqlglot import exp, parse_one
from sqlglot.dialects.spark import Spark
from sqlglot.parser import Parser
from sqlglot.tokens import Token, TokenType

from operators_lib.sql.json_syntax import FUNCTION_PARSERS as JSON_PARSERS

# Names built into sqlglot classes that the planner matches on (aggregates, ranking functions).
_CLASS_FUNCTIONS = ("COUNT", "SUM", "AVG", "MIN", "MAX", "ROW_NUMBER", "RANK", "DENSE_RANK")
# Aggregates parsed as ``exp.AnonymousAggFunc`` keeping their name (sqlglot's classes would
# merge VAR_SAMP and VARIANCE, and a refusal should name what was written).
NAMED_AGGREGATES = ("STDDEV_POP", "STDDEV_SAMP", "STDDEV", "VAR_POP", "VAR_SAMP", "VARIANCE",
                    "FIRST_VALUE", "LAST_VALUE", "LISTAGG")
# Special syntax (``CAST(x AS t)``, ``EXTRACT(u FROM x)``, ``TRIM(BOTH c FROM s)``, ``SUBSTRING(s
# FROM a FOR b)``, ``FLOOR(ts TO u)``, ``OVERLAY(s PLACING x FROM n [FOR m])``, ``POSITION(a IN
# b)``); everything else Spark's parser would turn into a class
# (CHR, DECODE, POSITION, ...) becomes a plain call that the catalog must know.
_SYNTAX_FUNCTIONS = ("CAST", "TRY_CAST", "EXTRACT", "TRIM", "SUBSTRING", "SUBSTR", "FLOOR",
                     "CEIL", "OVERLAY", "POSITION")


def _unit_first(name: str):
    """TIMESTAMPADD(unit, n, ts) / TIMESTAMPDIFF(unit, a, b): the unit is a keyword, not a
    column."""
    def build(args: list) -> exp.Expression:
        if args and isinstance(args[0], exp.Column) and not args[0].table:
            args = [exp.Var(this=args[0].name.upper())] + args[1:]
        return exp.Anonymous(this=name, expressions=args)
    return build


def _named_aggregate(name: str):
    def build(args: list) -> exp.Expression:
        return exp.AnonymousAggFunc(this=name, expressions=args)
    return build


class Flink(Spark):
    class Tokenizer(Spark.Tokenizer):
        QUOTES = ["'"]
        STRING_ESCAPES = ["'"]
        IDENTIFIERS = ["`"]
        # SESSION is a window function in Flink (``SESSION(ts, gap)``), not a keyword.
        KEYWORDS = {k: v for k, v in Spark.Tokenizer.KEYWORDS.items() if k != "SESSION"}

    class Parser(Spark.Parser):
        STRICT_CAST = True  # CAST is exp.Cast, TRY_CAST exp.TryCast (Spark's parser: both TryCast)
        FUNCTIONS = {
            **{name: Spark.Parser.FUNCTIONS[name] for name in _CLASS_FUNCTIONS},
            "TIMESTAMPADD": _unit_first("TIMESTAMPADD"),
            "TIMESTAMPDIFF": _unit_first("TIMESTAMPDIFF"),
            **{name: _named_aggregate(name) for name in NAMED_AGGREGATES},
        }
        FUNCTION_PARSERS = {name: Parser.FUNCTION_PARSERS.get(name)
                            or Spark.Parser.FUNCTION_PARSERS[name]
                            for name in _SYNTAX_FUNCTIONS} | JSON_PARSERS
        # ``TIMESTAMP '..'`` / ``DATE '..'`` literals are marked: Flink types them by their text.
        TYPE_LITERAL_PARSERS = {
            t: lambda self, this, to: _typed_literal(self.expression(exp.Cast(this=this, to=to)))
            for t in (exp.DType.TIMESTAMP, exp.DType.TIMESTAMPTZ, exp.DType.TIMESTAMPLTZ,
                      exp.DType.DATE, exp.DType.TIME)}

        def _parse_types(self, *args, **kwargs):
            # Hive's parser (under Spark's) drops the length of CHAR(n) / VARCHAR(n); Flink
            # truncates and pads to it.
            return Parser._parse_types(self, *args, **kwargs)


READ = Flink
TYPED_LITERAL = "flink_typed_literal"
WRITTEN_AS = "flink_written_as"  # the name a rewritten aggregate was written with, for messages


def _typed_literal(node: exp.Expression) -> exp.Expression:
    node.meta[TYPED_LITERAL] = True
    return node


def parse(text: str) -> exp.Expression:
    """Parse Flink SQL (a query or an expression)."""
    node = parse_one(text, read=READ)
    for rewrite in (_map_constructor, _symmetric, _overlaps, _arrayagg):
        node = node.transform(rewrite)
    return node


parse_expression = parse


def _map_constructor(node: exp.Expression) -> exp.Expression:
    """``MAP[k, v, ..]`` parses as a subscript of a column named MAP (a reserved word in
    Flink): make it the call it is."""
    col = node.this if isinstance(node, exp.Bracket) else None
    if isinstance(col, exp.Column) and not col.table and not col.this.quoted and \
            col.name.upper() == "MAP":
        call = exp.Anonymous(this="MAP", expressions=node.expressions)
        call.meta.update(col.meta or {})
        return call
    return node


def _symmetric(node: exp.Expression) -> exp.Expression:
    """``x BETWEEN SYMMETRIC a AND b`` is ``(x BETWEEN a AND b OR x BETWEEN b AND a)``, as
    Calcite (Flink) expands it (NULL bounds included); ``BETWEEN ASYMMETRIC`` is ``BETWEEN``."""
    if not isinstance(node, exp.Between) or node.args.get("symmetric") is None:
        return node
    x, low, high = node.this, node.args["low"], node.args["high"]
    plain = exp.Between(this=x.copy(), low=low.copy(), high=high.copy())
    plain.meta.update(node.meta or {})
    if not node.args["symmetric"]:
        return plain
    swapped = exp.Between(this=x.copy(), low=high.copy(), high=low.copy())
    return exp.Paren(this=exp.Or(this=plain, expression=swapped))


# JSON_ARRAYAGG(x [ABSENT | NULL ON NULL]) as Flink 2.3 computes it: a list of each row's value
# as JSON text (the element JSON_ARRAY writes for it; NULL skipped, or the text null), in arrival
# order, a retraction removing the earliest equal one, joined into an array ('[]' for none):
# LISTAGG's list, in both modes (measured: streaming with retractions, batch, window TVFs).
_ARRAYAGG = {
    "ABSENT ON NULL": "CONCAT('[', COALESCE(LISTAGG(CASE WHEN x IS NOT NULL THEN SUBSTRING("
                      "JSON_ARRAY(x) FROM 2 FOR CHAR_LENGTH(JSON_ARRAY(x)) - 2) END, ','), ''), "
                      "']')",
    "NULL ON NULL": "CONCAT('[', COALESCE(LISTAGG(SUBSTRING(JSON_ARRAY(x NULL ON NULL) FROM 2 "
                    "FOR CHAR_LENGTH(JSON_ARRAY(x NULL ON NULL)) - 2), ','), ''), ']')",
}


def _arrayagg(node: exp.Expression) -> exp.Expression:
    """``JSON_ARRAYAGG(x ..)``: the LISTAGG expression of ``_ARRAYAGG``; other forms stay the
    call, which the checks refuse (sql/check.py)."""
    if not (isinstance(node, exp.Anonymous) and node.name.upper() == "JSON_ARRAYAGG"
            and not isinstance(node.parent, exp.Window)):
        return node
    args = node.expressions
    on_null = args[-1].name if args and isinstance(args[-1], exp.Var) else "ABSENT ON NULL"
    values = [a for a in args if not isinstance(a, exp.Var)]
    if len(values) != 1:
        return node
    rewritten = parse_one(_ARRAYAGG[on_null], read=READ).transform(
        lambda n: values[0].copy() if isinstance(n, exp.Column) and n.name == "x" else n)
    rewritten.meta.update(node.meta or {})
    rewritten.find(exp.AnonymousAggFunc).meta[WRITTEN_AS] = "JSON_ARRAYAGG"
    return rewritten


def _overlaps(node: exp.Expression) -> exp.Expression:
    """``(a, b) OVERLAPS (c, d)`` as Calcite (Flink) expands it: an interval second element is
    an end point ``a + b``; each pair sorted (``CASE WHEN a <= b THEN a ELSE b END`` its start,
    so a NULL end point makes the other the start), then ``e0 >= s1 AND e1 >= s0``."""
    if not isinstance(node, exp.Overlaps) or not all(
            isinstance(p, exp.Tuple) and len(p.expressions) == 2
            for p in (node.this, node.expression)):
        return node

    def pair(p: exp.Tuple) -> tuple[exp.Expression, exp.Expression]:
        a, b = p.expressions
        b = exp.Add(this=a.copy(), expression=b.copy()) if isinstance(b, exp.Interval) else b
        ordered = exp.LTE(this=a.copy(), expression=b.copy())
        return (exp.Case(ifs=[exp.If(this=ordered, true=a.copy())], default=b.copy()),
                exp.Case(ifs=[exp.If(this=ordered.copy(), true=b.copy())], default=a.copy()))

    (s0, e0), (s1, e1) = pair(node.this), pair(node.expression)
    return exp.Paren(this=exp.And(this=exp.GTE(this=e0, expression=s1),
                                  expression=exp.GTE(this=e1, expression=s0)))


def line_of(node: exp.Expression) -> int | None:
    """1-based line of the first token of ``node`` within its statement, if sqlglot kept it."""
    for n in node.walk():
        line = n.meta.get("line") if n.meta else None
        if line:
            return int(line)
    return None


def pre_scan(text: str) -> tuple[str, int] | None:
    """The first construct of a statement that twinflow rejects before parsing (sqlglot either
    cannot parse it or would read it as something else): (message, 1-based line)."""
    if '"' in _outside_quotes(text):
        line = text.count("\n", 0, _outside_quotes(text).index('"')) + 1
        return ('double quotes are not Flink SQL (strings use single quotes, identifiers '
                'backticks)', line)
    try:
        tokens = Flink().tokenize(text)
    except Exception:  # noqa: BLE001 - the parser reports the same text with its position
        return None
    for tok in tokens:
        word = tok.text.upper()
        if word == "MATCH_RECOGNIZE":
            return "MATCH_RECOGNIZE is not supported", tok.line
        if tok.token_type == TokenType.DCOLON:
            return "'::' casts are not Flink SQL; write CAST(x AS type)", tok.line
        if tok.token_type == TokenType.NEQ and tok.text == "!=":
            return "'!=' is not Flink SQL; write <>", tok.line
    return None


Edits = list[tuple[int, int, str]]  # (start, end inclusive, replacement) in the text


def _rewritten(text: str, find: Callable[[list[Token], str], Edits]) -> str:
    """``text`` with the edits ``find`` makes from its tokens; as it is when it does not
    tokenize (the parser then reports it)."""
    try:
        tokens = Flink().tokenize(text)
    except Exception:  # noqa: BLE001 - the parser reports it
        return text
    for start, end, new in sorted(find(tokens, text), reverse=True):
        text = text[:start] + new + text[end + 1:]
    return text


def rewrite_lateral_tables(text: str, functions: Collection[str] = ()) -> str:
    """Flink's temporal table function join, ``LATERAL TABLE (Rates(o.ts)) [AS] r``, as the
    temporal join it is, ``Rates FOR SYSTEM_TIME AS OF o.ts [AS] r`` (sql/joins.py): Flink
    registers ``Rates`` with the Table API over a history table, its key and time attribute;
    twinflow reads them from the table or view named ``Rates`` (its PRIMARY KEY or latest-row
    deduplication, and its rowtime). A declared table function's (``functions``, lower case)
    and any other LATERAL TABLE are left as they are (sql/correlate.py, sql/check.py). Lines
    stay where they were."""
    return _rewritten(text, partial(_lateral_edits, functions=functions))


def _lateral_edits(tokens: list[Token], text: str, functions: Collection[str]) -> Edits:
    edits: Edits = []
    for i, tok in enumerate(tokens):
        if tok.text.upper() != "LATERAL" or _texts(tokens, i + 1, 2) != ["TABLE", "("] or \
                i + 4 >= len(tokens) or tokens[i + 4].text != "(" or \
                tokens[i + 3].token_type not in (TokenType.VAR, TokenType.IDENTIFIER) or \
                tokens[i + 3].text.strip("`").lower() in functions:  # a table function
            continue
        depth, close = 1, None
        for j in range(i + 5, len(tokens)):
            depth += {"(": 1, ")": -1}.get(tokens[j].text, 0)
            if depth == 0:
                close = j
                break
            if depth == 1 and tokens[j].text == ",":
                break  # more than one argument: no temporal table function
        if close is None or close + 1 >= len(tokens) or tokens[close + 1].text != ")":
            continue
        after = _texts(tokens, close + 2, 3)
        if after[1:2] == ["("] or after[:1] == ["AS"] and after[2:] == ["("]:
            continue  # AS T(x): a table function's columns, no temporal table
        blank = text[tok.start:tokens[i + 3].start]
        edits += [(tok.start, tokens[i + 3].start - 1, re.sub(r"[^\n]", " ", blank)),
                  (tokens[i + 4].start, tokens[i + 4].end, " FOR SYSTEM_TIME AS OF "),
                  (tokens[close].start, tokens[close + 1].end, "  ")]
    return edits


def rewrite_window_tvfs(text: str) -> str:
    """``TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), ..))`` (also HOP, CUMULATE, SESSION, and named
    arguments ``DATA => TABLE t``) in a form sqlglot parses: the inner ``TABLE`` keywords
    blanked, so that the table is a plain argument, and SESSION's ``TABLE t PARTITION BY k``
    (or ``(k1, k2)``) as ``t, PARTITION_BY(k)``. Lines stay where they were."""
    return _rewritten(text, _window_tvf_edits)


def _window_tvf_edits(tokens: list[Token], text: str) -> Edits:
    edits: Edits = []
    for i, tok in enumerate(tokens):
        nxt = _texts(tokens, i + 1, 2)
        if tok.text.upper() != "TABLE" or nxt[:1] != ["("] or nxt[1:] not in (
                ["TUMBLE"], ["HOP"], ["CUMULATE"], ["SESSION"]):
            continue
        depth = 0
        for j in range(i + 1, len(tokens)):
            t = tokens[j]
            depth += {"(": 1, ")": -1}.get(t.text, 0)
            if depth == 0:
                break
            if depth == 2 and t.text.upper() == "TABLE" and j + 1 < len(tokens) and \
                    tokens[j + 1].token_type in (TokenType.VAR, TokenType.IDENTIFIER):
                edits.append((t.start, t.end, " " * (t.end - t.start + 1)))
            if depth == 2 and t.token_type == TokenType.PARTITION_BY and j + 1 < len(tokens):
                keys = tokens[j + 1]
                if keys.text == "(":  # PARTITION BY (k1, k2): the parenthesis is the call's
                    edits.append((t.start, t.end, ", PARTITION_BY"))
                else:
                    edits.append((t.start, t.end, ", PARTITION_BY("))
                    edits.append((keys.end + 1, keys.end, ")"))
    return edits


def _texts(tokens: list[Token], start: int, n: int) -> list[str]:
    return [t.text.upper() for t in tokens[start:start + n]]


def _outside_quotes(text: str) -> str:
    """``text`` with single-quoted strings and backticked identifiers blanked (same length)."""
    return re.sub(r"'(?:[^']|'')*'|`(?:[^`]|``)*`", lambda m: " " * len(m.group()), text)
