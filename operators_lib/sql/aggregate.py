"""Unbounded GROUP BY (and aggregates without GROUP BY: one global group) with HAVING.

Plan: child -> Project(group keys, aggregate arguments) -> Aggregate -> [Filter(HAVING)] ->
Project(select list). In the select list and HAVING, aggregate calls become the Aggregate's
output columns and GROUP BY expressions become its key columns; any other column is an error,
as in Flink.

GROUP BY a time window (sql/windows.py) plans the same keys and aggregates into a
``WindowAggregate``: child -> Project(keys, arguments, time) -> WindowAggregate -> ...
"""

from __future__ import annotations

from sqlglot import exp

from operators_lib.plan import (
    AggCall,
    Aggregate,
    Field,
    Node,
    Project,
    TimeWindow,
    WindowAggregate,
    quote,
)
from operators_lib.sql.context import Ctx, Scope, key
from operators_lib.sql.dialect import WRITTEN_AS
from operators_lib.sql.over import (
    AGGREGATES,
    M2,
    ORDERED,
    VARIANCE,
    agg_arg,
    agg_name,
    agg_type,
    template,
)
from operators_lib.sql.windows import (
    AUXILIARY,
    BOUND_TYPE,
    GROUP_WINDOWS,
    TVF_BOUNDS,
    Windowed,
    as_rows,
    group_window,
    interval_below,
    source_table,
    tvf_below,
    unwrap,
    window_below,
    window_grouping,
    windowed_by,
)
from operators_lib.types import FlinkType


def plan_aggregate(ctx: Ctx, child: Node, scope: Scope, items, group, having,
                   project, resolved_having: exp.Expression | None = None) -> Node:
    """``resolved_having``: the HAVING condition already resolved (sql/grouping_sets.py
    rewrites it per grouping set), in place of ``having``."""
    below = tvf_below(child)
    tvf_rows = below is not None and not _window_grouping(ctx, scope, group, below)
    if tvf_rows:
        # Flink plans this as the TVF's rows followed by an updating GROUP BY.
        child = as_rows(ctx, child)
    tvf, child = unwrap(ctx, child, group or having or items[0][1])
    by_name = {f.name: f for f in child.fields}
    pre: list[tuple[str, str, Field]] = []
    keys: dict[str, str] = {}  # resolved GROUP BY expression (SQL) -> key column
    window: tuple[str, TimeWindow, exp.Expression] | None = None  # (time column, window, call)
    bounds = TVF_BOUNDS  # a group window's: hidden columns (below)
    for g in group.expressions if group else []:
        if isinstance(g, exp.Literal) and not g.is_string:
            raise ctx.err("GROUP BY by position is not supported; name the expression", g)
        if isinstance(g, exp.Anonymous) and g.name.upper() in GROUP_WINDOWS:
            if window is not None or tvf is not None:
                raise ctx.err("one time window per GROUP BY", g)
            window = (*group_window(ctx, g, scope, child.fields), g)
            bounds = tuple(ctx.hidden(b) for b in ("ws", "we", "wt"))
            continue
        resolved = scope.resolve(ctx, g)
        if tvf is not None and isinstance(resolved, exp.Column) and resolved.name in TVF_BOUNDS:
            keys[key(resolved)] = resolved.name
            continue
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

    def add_call(func: exp.Expression, internal: str | None = None) -> str:
        """The output column of the aggregate call ``func`` (``internal``: as that internal
        aggregate of func's argument, e.g. M2)."""
        text = key(func) if internal is None else f"{internal}:{key(func)}"
        if text in calls:
            return calls[text]
        name = internal or agg_name(func)
        if internal is None and name not in AGGREGATES:
            raise ctx.err(f"aggregate {name} is not supported (supported: "
                          f"{', '.join(sorted(AGGREGATES))})", func)
        arg_node, distinct, separator = agg_arg(func), False, None
        if isinstance(arg_node, exp.Distinct):
            if len(arg_node.expressions) != 1:
                raise ctx.err(f"{name}(DISTINCT ...) takes one argument", func)
            if name not in ("COUNT", "SUM", "AVG", "MIN", "MAX"):
                raise ctx.err(f"{name}(DISTINCT ...) is not supported", func)
            arg_node, distinct = arg_node.expressions[0], True
        if name == "LISTAGG" and len(func.expressions) == 2:
            sep = func.expressions[1]
            if not (isinstance(sep, exp.Literal) and sep.is_string):
                raise ctx.err("LISTAGG's separator must be a string literal", sep)
            separator = sep.name
        if (name == "LISTAGG" and internal is None and n_keys == 0 and window is None
                and tvf is None and WRITTEN_AS not in (func.meta or {})
                and next(arg_node.find_all(exp.Column), None) is None):
            # Measured on Flink 2.3 (a fuzzer finding): the result of a constant's LISTAGG is
            # typed NOT NULL; on an empty input the stream answers no row, batch fails the job.
            raise ctx.err("LISTAGG of a constant without GROUP BY is not supported (Flink types "
                          "it NOT NULL: on an empty input its batch job fails writing NULL, its "
                          "stream answers no row)", func)
        if name in ORDERED or internal == M2:
            written = name if internal is None else agg_name(func)
            if tvf_rows:  # emitted as windows fire: not in the order Flink emits them
                raise ctx.err(f"{written} over a window TVF's rows (a GROUP BY without the "
                              "window's bounds) is not supported", func)
            _ordered_in_window(ctx, window, written, func)
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
                            distinct, separator if name == "LISTAGG" else None))
        return out

    def statistic(func: exp.Expression) -> exp.Expression:
        """STDDEV_POP(x) and the like as Flink reduces them (sql/over.py, VARIANCE):
        ``CAST(POWER(M2(x) / COUNT(x), 0.5) AS T)``; the sample forms divide by ``CASE
        COUNT(x) WHEN 1 THEN NULL ELSE COUNT(x) - 1 END``."""
        name = agg_name(func)
        arg_node = agg_arg(func)
        if isinstance(arg_node, exp.Distinct):
            raise ctx.err(f"{name}(DISTINCT ...) is not supported", func)
        m2 = exp.column(add_call(func, M2), quoted=True)
        cnt = exp.column(add_call(exp.Count(this=arg_node.copy())), quoted=True)
        arg_type = next(a.arg_type for a in aggs if a.name == m2.name)
        t = agg_type(ctx, name, arg_type, func).sql()
        pop, root = VARIANCE[name]
        den = "c" if pop else "CASE WHEN c = 1 THEN NULL ELSE c - 1 END"
        text = f"CAST(POWER(m2 / {den}, 0.5) AS {t})" if root else f"CAST(m2 / {den} AS {t})"
        return template(text, m2=m2, c=cnt)

    # GROUP BY the window start and end of a window aggregate's result (Nexmark q5): each row
    # is in the window it carries, and the rows of a window arrive together when it fires.
    given = _given_window(child, pre[:n_keys]) if tvf is None and window is None else None
    if given is not None:
        window = (given[1], TimeWindow("GIVEN", 0, 0), group)
        bounds = (*given, ctx.hidden("wt"))
    if tvf is not None:
        window = (tvf.time_col, tvf.window, tvf.call)
        for b in TVF_BOUNDS:
            keys[key(exp.column(b, quoted=True))] = b

    def auxiliary(node: exp.Anonymous) -> exp.Expression:
        """TUMBLE_START(ts, size) and the like: the GROUP BY window's bound."""
        name = node.name.upper()
        call = window[2] if window is not None and tvf is None else None
        # ``node`` comes from the resolved SELECT list or HAVING, ``call`` from the GROUP BY.
        if call is None or name.split("_")[0] != call.name.upper() or [
                key(a) for a in node.expressions] != [
                key(scope.resolve(ctx, a)) for a in call.expressions]:
            raise ctx.err(f"{name}(..) must name the GROUP BY's window "
                          f"({call.sql() if call is not None else 'there is none'})", node)
        part = AUXILIARY[name]
        if part in ("ROWTIME", "PROCTIME"):
            kind = next(f.time_attr for f in child.fields if f.name == window[0])
            if part != kind.upper():
                raise ctx.err(f"{name}(..) needs a window over "
                              f"{'an event' if part == 'ROWTIME' else 'a processing'}-time "
                              f"attribute; {window[0]} is a {kind} attribute (use "
                              f"{name.split('_')[0]}_{kind.upper()})", node)
            part = "ROWTIME"
        return exp.column(bounds[("START", "END", "ROWTIME").index(part)], quoted=True)

    def rewrite(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.AggFunc) and agg_name(node) in VARIANCE:
            return statistic(node)
        if isinstance(node, exp.AggFunc):
            return exp.column(add_call(node), quoted=True)
        if isinstance(node, exp.Anonymous) and node.name.upper() in AUXILIARY:
            return auxiliary(node)
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
    if having:
        resolved_having = scope.resolve(ctx, having.this)
    having_cond = rewrite(resolved_having) if resolved_having is not None else None
    group_fields = tuple(f for _, _, f in pre[:n_keys] if given is None or f.name not in given)
    agg_fields = tuple(Field(a.name, a.type) for a in aggs)
    if window is None:
        signs = _negative_zero_keys(ctx, pre, group_fields)
        sign_fields = tuple(f for _, _, f in pre[len(pre) - len(signs):])
        pre_node = Project(child, tuple((n, t) for n, t, _ in pre), tuple(f for _, _, f in pre))
        node: Node = Aggregate(pre_node, tuple(f.name for f in group_fields + sign_fields),
                               tuple(aggs), group_fields + sign_fields + agg_fields,
                               ctx.catalog.state_ttl_ms)
        if signs:
            node = _restore_negative_zero(node, signs, group_fields + agg_fields)
    else:
        node = _window_aggregate(ctx, child, pre, group_fields, tuple(aggs), agg_fields, window,
                                 bounds)
    if having_cond is not None:
        node = ctx.where(node, having_cond)
    return project(ctx, node, out_items)


def _ordered_in_window(ctx: Ctx, window: tuple | None, name: str, func: exp.Expression
                       ) -> None:
    """Aggregates of the arrival order (FIRST_VALUE, LAST_VALUE, LISTAGG, and Welford's M2 of
    the statistical ones) run in a TUMBLE window over a table only: Flink merges the
    accumulators of a HOP's or CUMULATE's slices and of merged SESSIONs (it has no merge for
    FIRST_VALUE / LAST_VALUE and refuses them there), and the rows of a cascaded window or a
    join arrive in an order twinflow does not reproduce."""
    if window is None:
        return
    kind = window[1].kind
    if kind != "TUMBLE":
        what = "a window aggregate's result" if kind == "GIVEN" else f"a {kind} window"
        name = (func.meta or {}).get(WRITTEN_AS, name)
        raise ctx.err(f"{name} in {what} is not supported (in a TUMBLE window or a GROUP BY "
                      "it is)", func)


def _negative_zero_keys(ctx: Ctx, pre: list, group_fields: tuple[Field, ...]
                        ) -> dict[str, str]:
    """Flink groups -0.0 and 0.0 apart (Java compares the bits), Spark and pandas together:
    each FLOAT / DOUBLE key gets a hidden key telling -0.0 (appended to ``pre``). Returns
    {key column: its sign column}."""
    signs = {}
    for f in group_fields:
        if f.type.is_floating:
            name = ctx.hidden("z")
            signs[f.name] = name
            q = quote(f.name)
            pre.append((name, f"coalesce({q} = 0 AND CAST({q} AS STRING) LIKE '-%', FALSE)",
                        Field(name, FlinkType("BOOLEAN"))))
    return signs


def _restore_negative_zero(node: Node, signs: dict[str, str], fields: tuple[Field, ...]
                           ) -> Project:
    """The grouped keys with their -0.0 back (Spark's grouping returns 0.0), the sign columns
    dropped."""
    exprs = []
    for f in fields:
        q = quote(f.name)
        if f.name in signs:
            exprs.append((f.name, f"CASE WHEN {quote(signs[f.name])} THEN CAST('-0.0' AS "
                                  f"{f.type.spark().simpleString()}) ELSE {q} END"))
        else:
            exprs.append((f.name, q))
    return Project(node, tuple(exprs), fields)


def _given_window(child: Node, keys: list) -> tuple[str, str] | None:
    """The GROUP BY key columns that are the window start and end of a window aggregate
    below, if both are among them."""
    if window_below(child) is None:
        return None
    kind, bounds = windowed_by(child, [n for n, t, _ in keys if t == quote(n)])
    return bounds if kind == "aggregate" else None


def _window_grouping(ctx: Ctx, scope: Scope, group, tvf: Windowed) -> bool:
    """Is a GROUP BY over a window TVF a window aggregation (windows.window_grouping)?"""
    grouped = set()
    for g in group.expressions if group else []:
        resolved = scope.resolve(ctx, g)
        grouped.add(resolved.name if isinstance(resolved, exp.Column) else None)
    return window_grouping(tvf.window.kind, tvf.partition, grouped)


def _window_aggregate(ctx: Ctx, child: Node, pre: list, group_fields: tuple[Field, ...],
                      aggs: tuple[AggCall, ...], agg_fields: tuple[Field, ...],
                      window: tuple[str, TimeWindow, exp.Expression], bounds: tuple[str, ...]
                      ) -> WindowAggregate:
    time_col, spec, call = window
    source, inner, joined = source_table(child), window_below(child), interval_below(child)
    if source is None and inner is None and joined is None:
        raise ctx.err(f"a {spec.kind} window over a join, a regular aggregate, a UNION or a "
                      "window TVF's rows is not supported yet", call)
    ordered = next((a for a in aggs if a.func in ORDERED or a.func == M2), None)
    if ordered is not None and source is None:
        name = "a statistical aggregate" if ordered.func == M2 else ordered.func
        raise ctx.err(f"{name} in a window over a join or another window is not supported",
                      call)
    time_kind = inner.time_kind if spec.kind == "GIVEN" else next(
        f.time_attr for f in child.fields if f.name == time_col)
    if time_kind == "proctime" and source is None:
        raise ctx.err(f"a {spec.kind} window over the processing time of another window "
                      "(a cascade of processing-time windows) is not supported yet", call)
    time_name = next((n for n, t, _ in pre if t == quote(time_col)), None)
    if time_name is None:
        time_name = ctx.hidden("t")
        pre.append((time_name, quote(time_col), Field(time_name, BOUND_TYPE)))
    pre_node = Project(child, tuple((n, t) for n, t, _ in pre), tuple(f for _, _, f in pre))
    start, end, wtime = bounds
    fields = group_fields + (Field(start, BOUND_TYPE), Field(end, BOUND_TYPE),
                             Field(wtime, BOUND_TYPE, time_kind)) + agg_fields
    hold = max(-joined.interval.lower_ms, joined.interval.upper_ms, 0) if joined else 0
    return WindowAggregate(pre_node, time_name, spec, tuple(f.name for f in group_fields), aggs,
                           (start, end, wtime), fields, source, time_kind, hold)
