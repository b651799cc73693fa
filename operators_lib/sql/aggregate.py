"""Unbounded GROUP BY (and aggregates without GROUP BY: one global group) with HAVING.

Plan: child -> Project(group keys, aggregate arguments) -> Aggregate -> [Filter(HAVING)] ->
Project(select list). In the select list and HAVING, aggregate calls become the Aggregate's
output columns and GROUP BY expressions become its key columns; any other column is an error,
as in Flink.
"""

from __future__ import annotations

from sqlglot import exp

from operators_lib.plan import AggCall, Aggregate, Field, Filter, Node, Project, quote
from operators_lib.sql.context import Ctx, Scope, key
from operators_lib.sql.over import AGGREGATES, agg_name, agg_type


def plan_aggregate(ctx: Ctx, child: Node, scope: Scope, items, group, having,
                   project) -> Node:
    by_name = {f.name: f for f in child.fields}
    pre: list[tuple[str, str, Field]] = []
    keys: dict[str, str] = {}  # resolved GROUP BY expression (SQL) -> key column
    for g in group.expressions if group else []:
        if isinstance(g, exp.Literal) and not g.is_string:
            raise ctx.err("GROUP BY by position is not supported; name the expression", g)
        resolved = scope.resolve(ctx, g)
        text = key(resolved)
        if text in keys:
            continue
        if isinstance(resolved, exp.Column):
            f = by_name[resolved.name]
            keys[text] = f.name
            pre.append((f.name, quote(f.name), Field(f.name, f.type)))
        else:
            name = ctx.hidden("g")
            keys[text] = name
            text = ctx.sql(resolved, child.fields)
            pre.append((name, text, Field(name, ctx.types(child.fields, [text], g)[0])))
    n_keys = len(pre)

    calls: dict[str, str] = {}  # aggregate call (SQL) -> output column
    aggs: list[AggCall] = []

    def add_call(func: exp.Expression) -> str:
        text = key(func)
        if text in calls:
            return calls[text]
        name = agg_name(func)
        if name not in AGGREGATES:
            raise ctx.err(f"aggregate {name} is not supported (supported: "
                          f"{', '.join(sorted(AGGREGATES))})", func)
        arg_node, distinct = func.this, False
        if isinstance(arg_node, exp.Distinct):
            if len(arg_node.expressions) != 1:
                raise ctx.err(f"{name}(DISTINCT ...) takes one argument", func)
            arg_node, distinct = arg_node.expressions[0], True
        for inner in arg_node.find_all(exp.AggFunc, exp.Window):
            raise ctx.err(f"{inner.key.upper()} inside an aggregate is not allowed", inner)
        arg, arg_type = None, None
        if not isinstance(arg_node, exp.Star):
            arg_text = ctx.sql(arg_node, child.fields)
            arg_type = ctx.types(child.fields, [arg_text], arg_node)[0]
            existing = [n for n, t, _ in pre if t == arg_text]
            arg = existing[0] if existing else ctx.hidden("a")
            if not existing:
                pre.append((arg, arg_text, Field(arg, arg_type)))
        elif name != "COUNT":
            raise ctx.err(f"{name}(*) is not valid", func)
        out = ctx.hidden("o")
        calls[text] = out
        aggs.append(AggCall(name, arg, arg_type, out, agg_type(ctx, name, arg_type, func),
                            distinct))
        return out

    def rewrite(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.AggFunc):
            return exp.column(add_call(node), quoted=True)
        if key(node) in keys:
            return exp.column(keys[key(node)], quoted=True)
        if isinstance(node, exp.Column):
            raise ctx.err(f"column {node.name} must appear in GROUP BY or inside an aggregate "
                          "function", node)
        node = node.copy()
        for arg, value in list(node.args.items()):
            if isinstance(value, exp.Expression):
                node.set(arg, rewrite(value))
            elif isinstance(value, list):
                node.set(arg, [rewrite(v) if isinstance(v, exp.Expression) else v
                               for v in value])
        return node

    out_items = [(name, rewrite(body)) for name, body in items]
    having_cond = rewrite(scope.resolve(ctx, having.this)) if having else None
    pre_node = Project(child, tuple((n, t) for n, t, _ in pre), tuple(f for _, _, f in pre))
    group_fields = tuple(f for _, _, f in pre[:n_keys])
    node: Node = Aggregate(pre_node, tuple(f.name for f in group_fields), tuple(aggs),
                           group_fields + tuple(Field(a.name, a.type) for a in aggs),
                           ctx.catalog.state_ttl_ms)
    if having_cond is not None:
        node = Filter(node, ctx.sql(having_cond, node.fields), node.fields)
    return project(ctx, node, out_items)
