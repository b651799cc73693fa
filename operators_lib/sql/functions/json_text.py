"""JSON text as Flink reads and writes it, in Spark SQL: the building blocks of the JSON
functions (json_query.py, json_build.py).

Flink reads a JSON text with Jackson's default parser (no comments, single quotes, NaN or
leading zeros; text after the first value ignored; a repeated key keeps its last value), numbers
as Java's Integer / Long / BigInteger or, with a fraction or exponent, BigDecimal; it writes
JSON compact, object keys sorted (Java's String order), numbers as their Java toString
(BigDecimal's: 1E+5, 0.0, 1.50). Spark's variant parser (try_parse_json) accepts and rejects the
same texts (measured against Flink 2.3: tests/cases/functions/json_*), keeps the last of a
repeated key (spark.sql.variant.allowDuplicateKeys, engine/spark.py) and writes keys in the same
order, but reads numbers as doubles or trimmed decimals. So a document is parsed twice: as it is,
for its validity, and with every number literal turned into a string that holds the literal
between two private-use marks (``marked``), whose Flink text ``numbers`` writes at the end.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from operators_lib.sql.functions.base import value_refused
from operators_lib.sql.functions.strings import _spark_string

OPEN, CLOSE = "\ue000", "\ue001"  # around a number literal held as a string (module docstring)
_TOKENS = r'(?s)"(?:[^"\\]|\\.)*"?|[^"]+'  # strings and what lies between them
_NUMBER = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
# Texts twinflow does not read as Flink does: its marks; an exponent of 10 digits (BigDecimal's
# scale is an int: Flink rejects some, Spark reads infinity); and, among texts Spark rejects, an
# escaped surrogate (Jackson accepts a lone one) or a text beyond Spark's variant size limit.
_UNREAD = rf"[{OPEN}{CLOSE}]|\\u[eE]00[01]|[0-9][eE][+-]?0*[1-9][0-9]{{9}}"
_UNREAD_INVALID = r"\\u[dD][89a-fA-F]"
_LARGE = 4_000_000  # bytes

def q(text: str) -> str:
    return _spark_string(text)


def let(value: str, body: Callable[[str], str]) -> str:
    """``body(v)`` with ``v`` naming ``value``, evaluated once (a lambda over a one-element
    array; the name is the value's digest, so that the text is the same at every rendering)."""
    v = "jv" + hashlib.sha1(value.encode()).hexdigest()[:10]
    return f"element_at(transform(array({value}), {v} -> {body(v)}), 1)"


def marked(s: str) -> str:
    """``s`` with every number literal outside strings written as a string of the literal
    between the marks: the same document to Spark's parser, its numbers kept as written."""
    number = q(f'"{OPEN}$0{CLOSE}"')
    return (f"array_join(transform(regexp_extract_all({s}, {q(_TOKENS)}, 0), jt -> "
            f"IF(startswith(jt, '\"'), jt, regexp_replace(jt, {q(_NUMBER)}, {number}))), '')")


def document(s: str) -> str:
    """A struct of the JSON text ``s``: ``s``, ``ok`` (valid JSON to Flink), ``unread``
    (refused: _UNREAD) and ``v`` (the marked document's variant, where valid)."""
    def fields(d: str) -> str:
        text, ok = f"{d}.s", f"{d}.ok"
        unread = (f"({text} RLIKE {q(_UNREAD)} OR NOT {ok} AND ({text} RLIKE "
                  f"{q(_UNREAD_INVALID)} OR octet_length({text}) > {_LARGE}))")
        return (f"named_struct('s', {text}, 'ok', {ok}, 'unread', {unread}, 'v', "
                f"IF({ok}, try_parse_json({marked(text)}), NULL))")
    return let(f"named_struct('s', {s}, 'ok', try_parse_json({s}) IS NOT NULL)", fields)


def unread(name: str, d: str, spark_type: str) -> str:
    """A CASE branch refusing ``document`` ``d`` where twinflow does not read it as Flink does,
    or where Spark rejects its marked form."""
    message = (f"concat('{name} of a JSON text twinflow does not read as Flink does (an escaped "
               "surrogate, an exponent of 10 digits, the characters U+E000 / U+E001, or over "
               f"4 MB): ', substr({d}.s, 1, 60))")
    return f"WHEN {d}.unread OR {d}.ok AND {d}.v IS NULL THEN {value_refused(message, spark_type)}"


def decimal_text(p: str) -> str:
    """Java's BigDecimal.toString of the number text ``p`` (a JSON literal or a Java double's
    text): the digits with the scale's point, or scientific (1E+5, 1.0E-7) where the scale is
    negative or the exponent below -6; no sign on zero."""
    frac = f"regexp_extract({p}, '[.]([0-9]+)', 1)"
    whole = f"regexp_extract({p}, '^-?([0-9]+)', 1)"
    digits = f"regexp_replace(concat({whole}, {frac}), '^0+(?=[0-9])', '')"
    exponent = (f"CAST(coalesce(nullif(regexp_extract({p}, '[eE]([+-]?[0-9]+)', 1), ''), '0') "
                "AS BIGINT)")
    fields = (f"named_struct('u', {digits}, 's', CAST(length({frac}) - {exponent} AS INT), "
              f"'neg', startswith({p}, '-'))")

    def text(b: str) -> str:
        u, scale = f"{b}.u", f"{b}.s"
        adjusted = f"(length({u}) - 1 - {scale})"
        width = f"greatest(length({u}), {scale} + 1)"
        padded = f"lpad({u}, {width}, '0')"
        plain = (f"IF({scale} = 0, {u}, concat(substr({padded}, 1, {width} - {scale}), '.', "
                 f"substr({padded}, -{scale})))")
        scientific = (f"concat(substr({u}, 1, 1), IF(length({u}) > 1, concat('.', "
                      f"substr({u}, 2)), ''), 'E', IF({adjusted} > 0, '+', ''), "
                      f"CAST({adjusted} AS STRING))")
        return (f"concat(IF({b}.neg AND {u} <> '0', '-', ''), IF({scale} >= 0 AND "
                f"{adjusted} >= -6, {plain}, {scientific}))")
    return let(fields, text)


def number_text(p: str) -> str:
    """Flink's text of the JSON number literal ``p``: an integer as Java's Integer / Long /
    BigInteger print it (-0 is 0), else as BigDecimal."""
    return (f"IF({p} RLIKE '^-?[0-9]+$', IF({p} = '-0', '0', {p}), {decimal_text(p)})")


def numbers(text: str) -> str:
    """``text`` (a value or JSON read from a marked document) with each marked number, quoted
    or not, written as Flink writes it."""
    marks = q(f'"?{OPEN}|{CLOSE}"?')
    return (f"array_join(transform(split({text}, {marks}), (jp, ji) -> "
            f"IF(ji % 2 = 1, {number_text('jp')}, jp)), '')")


def literal(text: str) -> str:
    """The number literal a marked value ``text`` holds, else ''."""
    return f"regexp_extract({text}, {q(f'^{OPEN}(.*){CLOSE}$')}, 1)"

