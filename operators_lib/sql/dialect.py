"""The Flink SQL dialect for sqlglot: Spark's grammar (backticks, INTERVAL '2' MINUTE, WINDOW
clauses) parses Flink's OVER-window syntax; Flink-only functions are mapped when transpiling."""

from __future__ import annotations

from sqlglot import exp, parse_one
from sqlglot.dialects.spark import Spark

READ = "spark"


def parse_expression(text: str) -> exp.Expression:
    return parse_one(text, read=READ)


# Flink's HASH_CODE(string) is Math.abs of Java's String.hashCode (s[0]*31^(n-1) + .. + s[n-1]
# over the UTF-16 code units, 32-bit; abs(-2^31) stays -2^31). Spark has no such function: fold
# over the UTF-16BE bytes two at a time modulo 2^32, read it as a signed INT, take abs.
_HASH_CODE = (
    "CAST(IF({x} = '', 0, (abs((aggregate(sequence(1, octet_length(encode({x}, 'UTF-16BE')), "
    "2), 0L, (h, i) -> (h * 31 + CAST(conv(hex(substr(encode({x}, 'UTF-16BE'), i, 2)), 16, 10) "
    "AS BIGINT)) % 4294967296) + 2147483648) % 4294967296 - 2147483648) + 2147483648) "
    "% 4294967296 - 2147483648) AS INT)")


def _flink_functions(node: exp.Expression) -> exp.Expression:
    def rewrite(n: exp.Expression) -> exp.Expression:
        if isinstance(n, exp.Anonymous) and n.name.upper() == "HASH_CODE" and len(
                n.expressions) == 1:
            arg = n.expressions[0].sql(dialect=Spark)
            return parse_one(_HASH_CODE.format(x=f"({arg})"), read=READ)
        return n

    return node.transform(rewrite) if any(
        isinstance(n, exp.Anonymous) for n in node.walk()) else node


def to_spark_sql(node: exp.Expression) -> str:
    """Render a (scalar) Flink expression as Spark SQL for ``F.expr``."""
    return _flink_functions(node).sql(dialect=Spark)


def line_of(node: exp.Expression) -> int | None:
    """1-based line of the first token of ``node`` within its statement, if sqlglot kept it."""
    for n in node.walk():
        line = n.meta.get("line") if n.meta else None
        if line:
            return int(line)
    return None
