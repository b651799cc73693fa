"""The Flink SQL dialect for sqlglot: Spark's grammar (backticks, INTERVAL '2' MINUTE, WINDOW
clauses) parses Flink's OVER-window syntax; Flink-only functions are mapped when transpiling."""

from __future__ import annotations

from sqlglot import exp, parse_one
from sqlglot.dialects.spark import Spark

READ = "spark"


def parse_expression(text: str) -> exp.Expression:
    return parse_one(text, read=READ)


def to_spark_sql(node: exp.Expression) -> str:
    """Render a (scalar) Flink expression as Spark SQL for ``F.expr``."""
    return node.sql(dialect=Spark)


def line_of(node: exp.Expression) -> int | None:
    """1-based line of the first token of ``node`` within its statement, if sqlglot kept it."""
    for n in node.walk():
        line = n.meta.get("line") if n.meta else None
        if line:
            return int(line)
    return None
