"""Plan -> DataFrame for the operators that are the same in both modes (Filter, Project).

The batch and stream planners pass in how to build a Scan and an Over; everything between them
is translated here once, so the two modes evaluate every scalar expression identically.
"""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from operators_lib.plan import HIDDEN, OP, Filter, Node, Over, Project, Scan


def build(node: Node, scan: Callable[[Scan], DataFrame],
          over: Callable[[Over, DataFrame], DataFrame]) -> DataFrame:
    if isinstance(node, Scan):
        return scan(node)
    child = build(node.child, scan, over)
    if isinstance(node, Filter):
        cond: Column = F.expr(node.condition)
        if OP in child.columns:
            # Late rows travel with the changelog to the sink; a filter must not drop them.
            cond = (F.col(OP) == F.lit("LATE")) | F.coalesce(cond, F.lit(False))
        return child.where(cond)
    if isinstance(node, Project):
        cols = [F.expr(sql).alias(name) for name, sql in node.exprs]
        return child.select(*cols, *[F.col(h) for h in HIDDEN if h in child.columns])
    if isinstance(node, Over):
        return over(node, child)
    raise TypeError(f"unknown plan node {type(node).__name__}")
