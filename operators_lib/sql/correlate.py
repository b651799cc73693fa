"""``LATERAL TABLE(f(..)) [AS T(a, ..)]``: a Python table function's rows joined to each row of
the FROM clause before it, as a ``Correlate`` plan node (Flink's Correlate).

``FROM t, LATERAL TABLE(f(x)) AS T(a, b)``, ``CROSS JOIN`` and ``JOIN .. ON TRUE``: an input row
the function gives no rows is dropped; ``LEFT JOIN LATERAL TABLE(..) ON TRUE`` keeps it, with
NULLs. Without column names the columns are f0, f1, .. (Flink's). Refused: any other ON
condition (Flink refuses one in a LEFT JOIN; an inner join's belongs in WHERE), and what orders
the function's rows (sql/ordering.py).
"""

from __future__ import annotations

from sqlglot import exp

from operators_lib.plan import (
    Correlate,
    Field,
    Node,
)
from operators_lib.sql.context import Col, Ctx, Scope
from operators_lib.sql.functions import Call, Env, Unsupported
from operators_lib.sql.python_udfs import check_arguments


def plan_correlate(ctx: Ctx, left: Node, scope: Scope, j: exp.Join) -> tuple[Node, Scope]:
    lateral: exp.Lateral = j.this
    call = lateral.this.expressions[0]
    f = ctx.table_functions.get(call.name.upper())
    if f is None:
        raise ctx.err(f"{call.name} is a scalar function; LATERAL TABLE calls a table function "
                      "(@udtf)", call)
    side, on = (j.side or "").upper(), j.args.get("on")
    if side not in ("", "LEFT"):
        raise ctx.err(f"{side} JOIN LATERAL TABLE is not supported (Flink joins a table "
                      "function's rows with CROSS JOIN, a comma, or LEFT JOIN .. ON TRUE)", j)
    if on is not None and not (isinstance(on, exp.Boolean) and on.this is True):
        raise ctx.err("a join with LATERAL TABLE takes ON TRUE (an inner join's condition "
                      "belongs in WHERE; Flink refuses one in a LEFT JOIN)", on)
    alias = lateral.args.get("alias")
    named = [c.name for c in alias.args.get("columns") or []] if alias else []
    names = named or [f"f{i}" for i in range(len(f.results))]
    if len(names) != len(f.results):
        raise ctx.err(f"{f.name} gives {len(f.results)} columns; {alias.sql()} names "
                      f"{len(names)}", alias)
    args = [scope.resolve(ctx, a) for a in call.expressions]
    env = Env(lambda n: ctx.types(left.fields, [ctx.sql(n, left.fields)], n)[0],
              ctx.regex_groups, ctx.functions, format_error=ctx.format_error,
              time_zone_id=ctx.time_zone_id)
    sql = tuple(ctx.sql(a, left.fields) for a in args)
    try:
        check_arguments(f, Call(f.name, call, tuple(args), sql, env))
    except Unsupported as e:
        raise ctx.err(str(e), e.node) from None
    new = tuple(Field(ctx.hidden("t"), t) for t in f.results)
    qualifier = alias.name.lower() if alias and alias.name else None
    node = Correlate(left, f.call(list(sql)), side == "LEFT", left.fields + new)
    return node, scope + Scope(tuple(Col(qualifier, n, c.name) for n, c in zip(names, new)))
