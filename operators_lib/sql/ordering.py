"""What twinflow refuses because it depends on an order of rows Flink defines and twinflow
does not reproduce, or Flink does not define at all.

- The rows a table function gives for one input row (LATERAL TABLE, plan.Correlate): Flink
  orders them as the function yields them; in twinflow they tie (one arrival number). An OVER
  window, a TopN or deduplication, or FIRST_VALUE / LAST_VALUE / LISTAGG over them is refused.
- The rows of two scans (a join, a UNION of two inputs, a self-join): their order in Flink
  depends on how its sources interleave, run to run. FIRST_VALUE / LAST_VALUE / LISTAGG (and
  JSON_ARRAYAGG, a LISTAGG: sql/dialect.py) over them has no one answer: refused (window
  aggregates refuse them there too, sql/aggregate.py).
"""

from __future__ import annotations

from sqlglot import exp

from operators_lib.plan import Aggregate, Correlate, Node, Over, Rank, WindowAggregate, find, scans
from operators_lib.sql.context import Ctx
from operators_lib.sql.over import ORDERED


def refuse_ordered(ctx: Ctx, plan: Node, where: exp.Expression) -> None:
    aggregates = [n for n in find(plan, Aggregate) + find(plan, WindowAggregate)
                  if any(a.func in ORDERED for a in n.aggs)]
    ordered: list[tuple[str, Node]] = [("an OVER window", n) for n in find(plan, Over)] + [
        ("a TopN or deduplication", n) for n in find(plan, Rank)] + [
        ("FIRST_VALUE, LAST_VALUE, LISTAGG or JSON_ARRAYAGG", n) for n in aggregates]
    for what, node in ordered:
        if find(node, Correlate):
            raise ctx.err(f"{what} over a table function's rows (LATERAL TABLE) is not "
                          "supported: Flink orders them as the function gives them, twinflow "
                          "does not", where)
    for node in aggregates:
        if len(scans(node.child)) > 1:
            raise ctx.err("FIRST_VALUE, LAST_VALUE, LISTAGG or JSON_ARRAYAGG over the rows of a "
                          "join or a UNION is not supported: Flink's order of those rows depends "
                          "on how its inputs interleave", where)
