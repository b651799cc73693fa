"""Subquery predicates in WHERE as SEMI / ANTI joins, as Flink plans them.

- ``x IN (SELECT y ...)``: SEMI join on ``x = y`` (a NULL never matches).
- ``x NOT IN (SELECT y ...)``: ANTI join on ``x = y OR x IS NULL OR y IS NULL`` (SQL's NULL
  rules: a NULL in the subquery empties the result, a NULL ``x`` survives only an empty
  subquery). Without a correlation equality this runs on one partition, as in Flink.
- ``[NOT] EXISTS (SELECT ... WHERE inner.k = outer.k AND ...)``: SEMI / ANTI join on the
  correlated conditions; the subquery's own conditions filter it before the join.
The predicate must be a conjunct of WHERE (not under OR). A correlated subquery is a plain
SELECT ... FROM ... WHERE (no GROUP BY); an uncorrelated one may be any supported query.
"""

from __future__ import annotations

from sqlglot import exp

from operators_lib.errors import SqlError
from operators_lib.plan import Filter, Node
from operators_lib.sql.context import Ctx, Scope
from operators_lib.sql.joins import plan_join, split_and


def has_subquery(node: exp.Expression) -> bool:
    return node.find(exp.Subquery, exp.Exists) is not None or any(
        i.args.get("query") is not None for i in node.find_all(exp.In))


def plan_subquery_predicate(ctx: Ctx, left: Node, lscope: Scope, pred: exp.Expression,
                            select_fn, from_fn) -> Node:
    node, negate = pred, False
    while isinstance(node, (exp.Not, exp.Paren)):
        negate ^= isinstance(node, exp.Not)
        node = node.this
    if isinstance(node, exp.In) and node.args.get("query") is not None:
        value, sub = node.this, node.args["query"]
    elif isinstance(node, exp.Exists):
        value, sub = None, node.this
    else:
        raise ctx.err("a subquery here is not supported: use [NOT] IN (SELECT ...) or "
                      "[NOT] EXISTS (SELECT ...) as a condition ANDed to the WHERE clause",
                      pred)
    select = sub.this if isinstance(sub, exp.Subquery) else sub
    # (a, b) IN (SELECT x, y ..): one value per column of the subquery.
    values = None if value is None else value.expressions if isinstance(
        value, exp.Tuple) else [value]
    kind = "ANTI" if negate else "SEMI"
    alias = ctx.hidden("sq")
    try:  # uncorrelated: the subquery is a query of its own
        right = select_fn(ctx, select)
        rscope = Scope.of(right.fields, alias)
        correlated: list[exp.Expression] = []
        items = None
        if values is not None:
            visible = rscope.cols
            if len(visible) != len(values):
                raise ctx.err(f"the subquery of IN must select {len(values)} column(s), it "
                              f"selects {len(visible)}", select)
            items = [exp.column(c.name, table=alias, quoted=True) for c in visible]
    except SqlError as uncorrelated_error:
        right, rscope, correlated, items = _correlated(ctx, select, lscope, alias, from_fn,
                                                       uncorrelated_error)
        if values is not None:
            items = [i.this if isinstance(i, exp.Alias) else i for i in select.expressions]
            if len(items) != len(values) or any(isinstance(i, exp.Star) for i in items):
                raise ctx.err(f"the subquery of IN must select {len(values)} column(s)",
                              select) from None

    conds: list = list(correlated)
    for value, item in zip(values or [], items or []):
        def membership(ls: Scope, rs: Scope, value=value, item=item) -> exp.Expression:
            x, y = ls.resolve(ctx, value), rs.resolve(ctx, item)
            eq = exp.EQ(this=x, expression=y)
            if not negate:
                return eq
            # NOT IN: the row is kept when every subquery row differs from it in a column
            # for sure; a NULL on either side is unknown (not a difference).
            return exp.or_(eq, exp.Is(this=x.copy(), expression=exp.Null()),
                           exp.Is(this=y.copy(), expression=exp.Null()))
        conds.append(membership)
    node, _ = plan_join(ctx, left, lscope, right, rscope, kind, conds, pred)
    return node


def _correlated(ctx: Ctx, select: exp.Select, outer: Scope, alias: str, from_fn,
                uncorrelated_error: SqlError):
    """A subquery that reads outer columns: its FROM, filtered by its own conditions, and the
    correlated conditions for the join."""
    for arg in ("group", "having", "joins", "order", "limit", "distinct"):
        if arg != "joins" and select.args.get(arg):
            raise ctx.err(f"a correlated subquery with {arg.upper()} is not supported",
                          select) from None
    from_ = select.args.get("from_") or select.args.get("from")
    if from_ is None:
        raise uncorrelated_error
    where = select.args.get("where")
    conjuncts = split_and(where.this) if where is not None else []
    right, scope, rest = from_fn(ctx, from_.this, select.args.get("joins") or [], [])
    own, correlated = [], []
    for cond in rest + conjuncts:
        try:
            own.append(scope.resolve(ctx, cond))
        except SqlError:
            (outer + scope).resolve(ctx, cond)  # raises for a column of neither
            correlated.append(cond)
    if own:
        cond = own[0] if len(own) == 1 else exp.and_(*own)
        right = Filter(right, ctx.sql(cond, right.fields, condition=True), right.fields)
    return right, scope, correlated, None
