"""Compile the final SELECT (and the views it reads) into a logical plan (``operators_lib.plan``).

Supported: projections, WHERE, views and subqueries in FROM, regular joins (``sql/joins.py``),
GROUP BY aggregation with HAVING (``sql/aggregate.py``), OVER aggregates (``sql/over.py``) and
TopN / deduplication (``sql/topn.py``).
Anything else raises SqlError naming the construct and its line. Column references are resolved
once (``Scope``) to plan fields; expression types are resolved by Spark itself (an empty
DataFrame of the input schema), so a type in the plan is exactly what both planners compute.
"""

from __future__ import annotations

from dataclasses import replace

from pyspark.sql import SparkSession
from sqlglot import exp

from operators_lib.catalog import ONE_ROW, Column, ViewDef
from operators_lib.errors import SqlError
from operators_lib.plan import (
    Aggregate,
    Field,
    Filter,
    Join,
    Node,
    Over,
    Project,
    Rank,
    Scan,
    SessionRows,
    Union,
    WindowAggregate,
    WindowRows,
    children,
    find,
    nested_keys,
    processing_time_joins,
    quote,
)
from operators_lib.sql.aggregate import plan_aggregate
from operators_lib.sql.context import Ctx, Scope, is_hidden, uniquify
from operators_lib.sql.correlate import plan_correlate
from operators_lib.sql.functions.json_build import builds_json
from operators_lib.sql.grouping_sets import has_grouping, plan_grouping_sets
from operators_lib.sql.insert import into_sink
from operators_lib.sql.joins import JOIN_KINDS, plan_join, split_and
from operators_lib.sql.ordering import refuse_ordered
from operators_lib.sql.over import plan_over
from operators_lib.sql.python_udfs import as_function, load_functions
from operators_lib.sql.script import UDF_ERRORS, Script
from operators_lib.sql.set_ops import aligned, plan_set_operation
from operators_lib.sql.statement import Statement
from operators_lib.sql.subqueries import has_subquery, plan_subquery_predicate
from operators_lib.sql.topn import (
    fold_rank_filter,
    has_ranking,
    mark_rank_outputs,
    plan_rank,
    unbounded_rank,
)
from operators_lib.sql.windows import (
    Windowed,
    as_rows,
    is_window_tvf,
    plan_window_tvf,
    traced,
    tvf_below,
    window_grouped,
)
from operators_lib.types import FlinkType
from operators_lib.udf.rejects import guard

_UNSUPPORTED_CLAUSES = {
    "order": "ORDER BY", "limit": "LIMIT", "qualify": "QUALIFY", "laterals": "LATERAL VIEW",
    "offset": "OFFSET",
}

Items = list[tuple[str, exp.Expression]]  # (output name, resolved expression)


def compile_query(script: Script, spark: SparkSession) -> Node:
    ctx = Ctx(script.catalog, spark, script.query_stmt)
    for name, f in load_functions(script.catalog, spark).items():
        ctx.functions[name] = as_function(f)
        if f.table:
            ctx.table_functions[name] = f
    plan = _select(ctx, script.query)
    if script.catalog.settings.get(UDF_ERRORS) == "reject":
        plan = guard(plan, lambda why: ctx.err(f"'{UDF_ERRORS}' = 'reject': {why}"))
    if unbounded_rank(plan):
        win = next((w for w in script.query.find_all(exp.Window)), script.query)
        raise ctx.err("a ranking function (ROW_NUMBER, RANK, DENSE_RANK) needs a filter on its "
                      "result in the enclosing query (e.g. SELECT * FROM (SELECT .., "
                      "ROW_NUMBER() OVER (..) AS rownum FROM t) WHERE rownum <= 10), as in "
                      "Flink's TopN", win)
    _check_window_consumers(ctx, plan, script.query)
    refuse_ordered(ctx, plan, script.query)
    _check_ttl(ctx, plan, script.query)
    for what, col in nested_keys(plan)[:1]:
        raise ctx.err(f"{what} of an ARRAY, MAP or ROW type ({col}) is not supported", None)
    if script.sink is not None:
        plan = into_sink(ctx, plan, script.sink, script.sink_columns)
    return mark_rank_outputs(plan)


def _check_ttl(ctx: Ctx, plan: Node, query: exp.Expression) -> None:
    """The state TTL applies to joins and GROUP BY (stream/join.py, stream/group_agg.py).
    Flink expires the state of an OVER, a TopN, a deduplication and a processing-time
    temporal join under it too; twinflow would keep it and give another result: refused.
    (Window operators, interval and event-time temporal joins drop their state by watermark;
    Flink's TTL does not apply to them.)"""
    if not ctx.catalog.state_ttl_ms:
        return
    kept = [("an OVER window", n) for n in find(plan, Over)] + [
        ("a TopN or deduplication", n) for n in find(plan, Rank) if not n.windowed] + [
        ("a processing-time temporal join", n) for n in processing_time_joins(plan)]
    for what, node in kept[:1]:
        at = query if isinstance(node, Join) else next(query.find_all(exp.Window), query)
        raise ctx.err(f"SET 'table.exec.state.ttl' with {what} is not supported: Flink "
                      "expires its state under the TTL too; twinflow applies the TTL to joins "
                      "and GROUP BY only", at)


def _check_window_consumers(ctx: Ctx, node: Node, query: exp.Expression) -> None:
    """Only projections and filters may read a window aggregate's result or a window TVF's
    rows (so far), besides window TopN and window joins, a regular join (not on both window
    bounds: Flink plans it as a regular join too; the window operator's rows are final,
    insert-only, as Flink's), and a GROUP BY over a window TVF's rows that is no window
    aggregation (Flink's plan for it too): Flink plans window operators over the others, which
    a regular TopN, join or aggregate would answer with another changelog."""
    windowed = find(node, WindowAggregate) + find(node, WindowRows) + find(node, SessionRows)
    allowed = isinstance(node, (Filter, Project, WindowAggregate, WindowRows, SessionRows)) or (
        isinstance(node, (Rank, Join)) and node.windowed) or _regular_join(node) or (
        isinstance(node, Aggregate) and _over_tvf_rows(node.child)
        and not window_grouped(node.child, node.group_by))
    if windowed and not allowed:
        raise ctx.err("a window TopN / deduplication, a join or a further aggregation over a "
                      "window aggregate or a window TVF's rows is not supported yet", query)
    for child in children(node):
        _check_window_consumers(ctx, child, query)


def _regular_join(node: Node) -> bool:
    return isinstance(node, Join) and not (node.windowed or node.interval or node.temporal)


def _over_tvf_rows(node: Node) -> bool:
    return isinstance(traced(node, ())[0], (WindowRows, SessionRows))


def _clause_node(value) -> exp.Expression | None:
    if isinstance(value, list):
        return value[0] if value else None
    return value if isinstance(value, exp.Expression) else None


def _union(ctx: Ctx, node: exp.Union) -> Node:
    """``a UNION ALL b`` (plan.Union) and ``a UNION b`` (a GROUP BY of all its columns over
    that, as Flink plans it): columns aligned as in ``set_ops.aligned``."""
    fields, projected = aligned(ctx, [_select(ctx, node.this), _select(ctx, node.expression)],
                                node, "a UNION")
    union = Union(tuple(projected), fields)
    if node.args.get("distinct"):
        return Aggregate(union, tuple(f.name for f in fields), (), union.fields,
                         ctx.catalog.state_ttl_ms)
    return union


def _with(ctx: Ctx, node: exp.Select) -> Node:
    """``WITH x AS (..), y AS (..) SELECT ..``: each common table expression is a view of this
    query (it hides a table or view of the same name, as in Flink), readable by the ones after
    it."""
    views = dict(ctx.catalog.views)
    for cte in node.args["with_"].expressions:
        if cte.args["alias"].args.get("columns"):
            raise ctx.err("column names after a WITH name (WITH x(a, b) AS ..) are not "
                          "supported; name the columns in its SELECT", cte)
        views[cte.alias.lower()] = ViewDef(cte.alias, cte.this, ctx.stmt.line)
    body = node.copy()
    body.set("with_", None)
    return _select(replace(ctx, catalog=replace(ctx.catalog, views=views)), body)


def _distinct(ctx: Ctx, node: exp.Select) -> Node:
    """``SELECT DISTINCT ..``: a GROUP BY of all its columns, as Flink plans it (and as UNION
    without ALL is planned)."""
    if node.args["distinct"].args.get("on") is not None:
        raise ctx.err("SELECT DISTINCT ON is not Flink SQL", node.args["distinct"])
    body = node.copy()
    body.set("distinct", None)
    child = _select(ctx, body)
    shown = tuple(f for f in child.fields if not is_hidden(f.name))
    if len(shown) != len(child.fields):
        child = Project(child, tuple((f.name, quote(f.name)) for f in shown), shown)
    return Aggregate(child, tuple(f.name for f in shown), (), shown, ctx.catalog.state_ttl_ms)


def _select(ctx: Ctx, node: exp.Expression) -> Node:
    if isinstance(node, (exp.Intersect, exp.Except)):
        return plan_set_operation(ctx, node, _select)
    if isinstance(node, exp.Union):
        return _union(ctx, node)
    if not isinstance(node, exp.Select):
        raise ctx.err(f"unsupported query form {node.key.upper()}", node)
    for arg, name in _UNSUPPORTED_CLAUSES.items():
        value = node.args.get(arg)
        if value:
            raise ctx.err(f"{name} is not supported yet", _clause_node(value) or node)
    if node.args.get("with_") is not None:
        return _with(ctx, node)
    if node.args.get("distinct") is not None:
        return _distinct(ctx, node)
    from_ = node.args.get("from_") or node.args.get("from")
    where = node.args.get("where")
    conjuncts = split_and(where.this) if where is not None else []
    subqueries = [c for c in conjuncts if has_subquery(c)]
    conjuncts = [c for c in conjuncts if not has_subquery(c)]
    for cond in conjuncts:
        for bad in cond.find_all(exp.Window, exp.AggFunc):
            raise ctx.err(f"{bad.key.upper()} in WHERE is not allowed", bad)
    node, proctime = _proctime_items(ctx, node, from_)
    if from_ is None:  # SELECT <constants>: one row (Flink's Values)
        child, scope = Scan(ONE_ROW, ()), Scope(())
    else:
        child, scope, conjuncts = _from(ctx, from_.this, node.args.get("joins") or [],
                                        conjuncts, proctime)
    child, conjuncts = fold_rank_filter(ctx, child, scope, conjuncts, where or node)
    if conjuncts:
        child = ctx.where(child, scope.resolve(
            ctx, exp.and_(*conjuncts) if len(conjuncts) > 1 else conjuncts[0]))
    for pred in subqueries:  # SEMI / ANTI joins
        child = plan_subquery_predicate(ctx, child, scope, pred, _select, _from)
    for item in node.expressions:
        if has_subquery(item):
            raise ctx.err("subqueries in the SELECT list are not supported", item)
    items = _items(ctx, node.expressions, scope)
    group, having = node.args.get("group"), node.args.get("having")
    if tvf_below(child) is not None and not (
            group or having or any(e.find(exp.AggFunc) for _, e in items)):
        child = as_rows(ctx, child)
    if has_ranking(items):
        if group or having:
            raise ctx.err("a ranking function together with GROUP BY / HAVING is not "
                          "supported; rank the grouped result in an enclosing query",
                          group or having)
        return plan_rank(ctx, child, items, scope, project)
    if any(e.find(exp.Window) for _, e in items):
        if group or having:
            raise ctx.err("OVER aggregates together with GROUP BY / HAVING are not supported",
                          group or having)
        windows = {w.name.lower(): w for w in node.args.get("windows") or []}
        return plan_over(ctx, child, items, windows, scope, project)
    if group or having or any(e.find(exp.AggFunc) for _, e in items):
        if not group:
            _refuse_empty_by_constant(ctx, conjuncts, where)
        plan = plan_grouping_sets if has_grouping(group, items, having) else plan_aggregate
        return plan(ctx, child, scope, items, group, having, project)
    return project(ctx, child, items)


def _refuse_empty_by_constant(ctx: Ctx, conjuncts: list, where) -> None:
    """An aggregate without GROUP BY under a WHERE condition that is constant and not TRUE:
    Flink's planner folds its input to an empty relation and answers one row (COUNT 0) in
    streaming mode too, where over rows that all fail a condition it answers none. twinflow
    does not fold plans, so it refuses the query rather than give the other answer."""
    for cond in conjuncts:
        if cond.find(exp.Column) is None:
            value = ctx.spark.range(1).selectExpr(ctx.sql(cond, ())).first()[0]
            if value is not True:
                raise ctx.err(f"WHERE {cond.sql()} is never true: an aggregate without GROUP "
                              "BY over such a constant condition is not supported (Flink "
                              "folds the input away and answers one row in both modes)",
                              where)


def _proctime_items(ctx: Ctx, node: exp.Select, from_: exp.Expression | None
                    ) -> tuple[exp.Select, tuple[str, ...]]:
    """``SELECT *, PROCTIME() AS p FROM t`` (nexmark's q12, q13): a processing-time attribute
    made by the query. Planned as t's scan with a PROCTIME() column ``p``, as if t's DDL
    declared ``p AS PROCTIME()``; the item becomes a reference to it."""
    found = [i for i, item in enumerate(node.expressions) if _is_proctime(item)]
    if not found:
        return node, ()
    table = from_.this if from_ is not None else None
    if not isinstance(table, exp.Table) or table.name.lower() not in ctx.catalog.tables or (
            node.args.get("joins")):
        raise ctx.err("PROCTIME() in a SELECT list is supported over one table (not a view, "
                      "a subquery or a join)", node.expressions[found[0]])
    node = node.copy()
    names = []
    for i in found:
        item = node.expressions[i]
        name = item.alias if isinstance(item, exp.Alias) else f"EXPR${i}"
        names.append(name)
        item.replace(exp.alias_(exp.column(name, quoted=True), name))
    return node, tuple(names)


def _is_proctime(item: exp.Expression) -> bool:
    body = item.this if isinstance(item, exp.Alias) else item
    return isinstance(body, exp.Anonymous) and body.name.upper() == "PROCTIME"


def _from(ctx: Ctx, first: exp.Expression, joins: list[exp.Join], conjuncts: list,
          proctime: tuple[str, ...] = ()):
    """The FROM clause as a left-deep join tree. WHERE conjuncts that relate the two sides of
    an inner (or comma) join become its join condition, as Flink's optimizer does.
    ``proctime``: PROCTIME() columns to add to ``first``, a table (``_proctime_items``)."""
    node, scope = _relation(ctx, first, proctime)
    if joins and isinstance(node, Windowed):
        raise ctx.err("a window TVF in a join (window join) is not supported yet", joins[0])
    for j in joins:
        if isinstance(j.this, exp.Lateral):  # LATERAL TABLE(f(..)): a table function
            node, scope = plan_correlate(ctx, node, scope, j)
            continue
        if j.args.get("using"):
            raise ctx.err("JOIN ... USING is not supported yet; write ON a.k = b.k", j)
        side = (j.side or "").upper()
        kind = (j.kind or "").upper()
        if kind in ("SEMI", "ANTI"):
            raise ctx.err(f"{kind} JOIN is not supported yet", j)
        kind = side if side in JOIN_KINDS else "INNER"
        target, version = j.this, j.this.args.get("version")
        if version is not None:  # a temporal join: FOR SYSTEM_TIME AS OF <left time>
            if version.args.get("kind") != "AS OF":
                raise ctx.err(f"FOR SYSTEM_TIME {version.args.get('kind')} is not supported "
                              "(a temporal join takes AS OF)", j)
            target = target.copy()
            target.set("version", None)
        right, rscope = _relation(ctx, target)
        if isinstance(right, Windowed):
            raise ctx.err("a window TVF in a join (window join) is not supported yet", j)
        on = j.args.get("on")
        conds = split_and(on) if on is not None else []
        if kind == "INNER":
            pulled = [c for c in conjuncts if _relates(ctx, c, scope, rscope)]
            conjuncts = [c for c in conjuncts if not any(c is p for p in pulled)]
            conds += pulled
        node, scope = plan_join(ctx, node, scope, right, rscope, kind, conds, j,
                                version.expression if version is not None else None)
    return node, scope, conjuncts


def _relates(ctx: Ctx, cond: exp.Expression, left: Scope, right: Scope) -> bool:
    """Does ``cond`` read both sides and nothing else?"""
    def ok(scope: Scope) -> bool:
        try:
            scope.resolve(ctx, cond)
            return True
        except SqlError:  # an unresolvable column is the answer
            return False
    return ok(left + right) and not ok(left) and not ok(right)


def _relation(ctx: Ctx, rel: exp.Expression, proctime: tuple[str, ...] = ()
              ) -> tuple[Node, Scope]:
    alias = rel.alias or None
    if is_window_tvf(rel):
        return plan_window_tvf(ctx, rel, _relation)
    if isinstance(rel, exp.Subquery):
        node = _select(ctx, rel.this)
        return node, Scope.of(node.fields, alias)
    if not isinstance(rel, exp.Table):
        raise ctx.err(f"unsupported FROM item {rel.key.upper()}", rel)
    if rel.args.get("version") is not None:
        raise ctx.err("FOR SYSTEM_TIME AS OF belongs to the right side of a JOIN (a temporal "
                      "join)", rel)
    name = rel.name.lower()
    if name in ctx.catalog.views:
        if name in ctx.views_in_progress:
            raise ctx.err(f"view {rel.name} refers to itself", rel)
        view = ctx.catalog.views[name]
        inner = ctx.for_view(name, Statement("", view.line or 1, ctx.stmt.source))
        node = _select(inner, view.query)
        return node, Scope.of(node.fields, alias or rel.name)
    table = ctx.catalog.tables.get(name)
    if table is None:
        known = sorted(t.name for t in ctx.catalog.tables.values()) + sorted(
            v.name for v in ctx.catalog.views.values())
        raise ctx.err(f"unknown table {rel.name} (declared: {', '.join(known) or 'none'})", rel)
    if proctime:
        table = replace(table, columns=table.columns + tuple(
            Column(p, FlinkType("TIMESTAMP", 3), None, proctime=True) for p in proctime))
    fields = []
    for c in table.columns:
        kind = "proctime" if c.proctime else (
            "rowtime" if table.watermark and table.watermark.column == c.name else None)
        # A physical column's declared type is Flink's (a computed one's comes from Spark).
        fields.append(Field(c.name, c.type, kind,
                            "table" if c.expr is None and not c.proctime else None))
    # Computed columns get their type from Spark; their Spark SQL is planned here, once.
    computed = [c for c in table.columns if c.expr is not None]
    if computed:
        physical = [f for f in fields if table.column(f.name).expr is None]
        ddl = Ctx(ctx.catalog, ctx.spark, Statement("", table.line or 1, ctx.stmt.source),
                  counter=ctx.counter, type_cache=ctx.type_cache, regex_cache=ctx.regex_cache,
                  frames=ctx.frames)
        texts = {c.name: ddl.sql(c.expr, physical) for c in computed}
        types = ddl.types(physical, list(texts.values()), None)
        by_name = dict(zip(texts, types))
        fields = [replace(f, type=by_name.get(f.name, f.type)) for f in fields]
        table = replace(table, columns=tuple(replace(c, spark_sql=texts.get(c.name))
                                             for c in table.columns))
    node = Scan(table, tuple(fields))
    typeof = {c.name: c.typeof for c in table.columns if c.typeof}
    return node, Scope.of(node.fields, alias or rel.name, typeof)


def _items(ctx: Ctx, expressions: list[exp.Expression], scope: Scope) -> Items:
    """The SELECT list with ``*`` / ``t.*`` expanded, names as Flink gives them (duplicates
    get a numeric suffix: ``id``, ``id0``), and column references resolved."""
    named: Items = []
    for i, item in enumerate(expressions):
        if isinstance(item, exp.Star) or (isinstance(item, exp.Column) and item.is_star):
            qualifier = item.table if isinstance(item, exp.Column) else None
            named.extend((c.name, exp.column(c.field, quoted=True))
                         for c in scope.star(ctx, qualifier or None, item))
            continue
        body = item.this if isinstance(item, exp.Alias) else item
        if isinstance(item, exp.Alias):
            name = item.alias
        elif isinstance(body, exp.Column):
            name = body.name
        else:
            name = f"EXPR${i}"
        named.append((name, scope.resolve(ctx, body)))
    return [(n, e) for n, (_, e) in zip(uniquify([n for n, _ in named]), named)]


def project(ctx: Ctx, child: Node, items: Items) -> Project:
    exprs, fields = [], []
    by_name = {f.name: f for f in child.fields}
    for name, body in items:
        exprs.append((name, ctx.sql(body, child.fields)))
        source = by_name.get(body.name) if isinstance(body, exp.Column) else None
        fields.append(Field(name, source.type, source.time_attr, source.origin) if source
                      else None)
    missing = [i for i, f in enumerate(fields) if f is None]
    if missing:
        types = ctx.types(child.fields, [exprs[i][1] for i in missing], items[missing[0]][1])
        for i, t in zip(missing, types):
            fields[i] = Field(exprs[i][0], t, origin="json" if builds_json(items[i][1]) else None)
    return Project(child, tuple(exprs), tuple(fields))
