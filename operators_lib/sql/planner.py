"""Compile the final SELECT (and the views it reads) into a logical plan (``operators_lib.plan``).

Supported now: projections, WHERE, views and subqueries in FROM, and OVER aggregates
(COUNT/SUM/AVG/MIN/MAX over ``ROWS|RANGE BETWEEN .. PRECEDING AND CURRENT ROW``, inline or via
``WINDOW w AS (...)``). Anything else raises SqlError naming the construct and its line.
Expression types are resolved by Spark itself (an empty DataFrame of the input schema), so a
type in the plan is exactly the type both planners will compute.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from sqlglot import exp

from operators_lib.catalog import Catalog
from operators_lib.plan import AggCall, Field, Filter, Frame, Node, Over, Project, Scan
from operators_lib.sql.ddl import interval_ms
from operators_lib.sql.dialect import line_of, to_spark_sql
from operators_lib.sql.script import Script, Statement
from operators_lib.types import FlinkType

AGGREGATES = {"COUNT", "SUM", "AVG", "MIN", "MAX"}
_UNSUPPORTED_CLAUSES = {
    "joins": "JOIN", "group": "GROUP BY", "having": "HAVING", "order": "ORDER BY",
    "limit": "LIMIT", "distinct": "DISTINCT", "with_": "WITH (common table expression)",
    "qualify": "QUALIFY", "laterals": "LATERAL VIEW", "offset": "OFFSET",
}


@dataclass
class _Ctx:
    catalog: Catalog
    spark: SparkSession
    stmt: Statement
    views_in_progress: tuple[str, ...] = ()


def compile_query(script: Script, spark: SparkSession) -> Node:
    ctx = _Ctx(script.catalog, spark, script.query_stmt)
    return _select(ctx, script.query)


def _err(ctx: _Ctx, message: str, node: exp.Expression | None = None):
    return ctx.stmt.error(message, line_of(node) if node is not None else None)


def _clause_node(value) -> exp.Expression | None:
    if isinstance(value, list):
        return value[0] if value else None
    return value if isinstance(value, exp.Expression) else None


def _select(ctx: _Ctx, node: exp.Expression) -> Node:
    if isinstance(node, exp.Union):
        raise _err(ctx, "UNION / set operations are not supported yet", node)
    if not isinstance(node, exp.Select):
        raise _err(ctx, f"unsupported query form {node.key.upper()}", node)
    for arg, name in _UNSUPPORTED_CLAUSES.items():
        value = node.args.get(arg)
        if value:
            raise _err(ctx, f"{name} is not supported yet", _clause_node(value) or node)
    from_ = node.args.get("from_") or node.args.get("from")
    if from_ is None:
        raise _err(ctx, "a SELECT without FROM is not supported", node)
    child = _relation(ctx, from_.this)
    where = node.args.get("where")
    if where is not None:
        cond = where.this
        for bad in cond.find_all(exp.Window, exp.AggFunc):
            raise _err(ctx, f"{bad.key.upper()} in WHERE is not allowed", bad)
        _check_columns(ctx, cond, child.fields)
        child = Filter(child, to_spark_sql(_unqualify(cond)), child.fields)
    windows = {w.name.lower(): w for w in node.args.get("windows") or []}
    items = _expand_star(ctx, node.expressions, child.fields)
    if any(item.find(exp.Window) for item in items):
        return _over(ctx, child, items, windows)
    for item in items:
        for agg in item.find_all(exp.AggFunc):
            raise _err(ctx, f"aggregate {agg.key.upper()} without OVER (GROUP BY aggregation) is "
                            "not supported yet", agg)
    return _project(ctx, child, items)


def _relation(ctx: _Ctx, rel: exp.Expression) -> Node:
    if isinstance(rel, exp.Subquery):
        return _select(ctx, rel.this)
    if not isinstance(rel, exp.Table):
        raise _err(ctx, f"unsupported FROM item {rel.key.upper()}", rel)
    name = rel.name.lower()
    if name in ctx.catalog.views:
        if name in ctx.views_in_progress:
            raise _err(ctx, f"view {rel.name} refers to itself", rel)
        view = ctx.catalog.views[name]
        inner = _Ctx(ctx.catalog, ctx.spark, Statement("", view.line or 1, ctx.stmt.source),
                     ctx.views_in_progress + (name,))
        return _select(inner, view.query)
    table = ctx.catalog.tables.get(name)
    if table is None:
        known = sorted(t.name for t in ctx.catalog.tables.values()) + sorted(
            v.name for v in ctx.catalog.views.values())
        raise _err(ctx, f"unknown table {rel.name} (declared: {', '.join(known) or 'none'})", rel)
    fields = []
    for c in table.columns:
        kind = "proctime" if c.proctime else (
            "rowtime" if table.watermark and table.watermark.column == c.name else None)
        fields.append(Field(c.name, c.type, kind))
    # Computed columns get their type from Spark.
    computed = [(c.name, to_spark_sql(c.expr)) for c in table.columns if c.expr is not None]
    if computed:
        physical = [f for f in fields if table.column(f.name).expr is None]
        types = _types(ctx, physical, [e for _, e in computed], None)
        by_name = dict(zip([n for n, _ in computed], types))
        fields = [Field(f.name, by_name.get(f.name, f.type), f.time_attr) for f in fields]
    return Scan(table, tuple(fields))


def _expand_star(ctx: _Ctx, items: list[exp.Expression], fields) -> list[exp.Expression]:
    out = []
    for item in items:
        if isinstance(item, exp.Star) or (isinstance(item, exp.Column) and item.is_star):
            out.extend(exp.column(f.name, quoted=True) for f in fields)
        else:
            out.append(item)
    return out


def _unqualify(node: exp.Expression) -> exp.Expression:
    node = node.copy()
    for col in node.find_all(exp.Column):
        col.set("table", None)
        col.set("db", None)
    return node


def _check_columns(ctx: _Ctx, node: exp.Expression, fields) -> None:
    names = {f.name.lower() for f in fields}
    for col in node.find_all(exp.Column):
        if col.name and col.name.lower() not in names:
            raise _err(ctx, f"unknown column {col.name} (available: "
                            f"{', '.join(f.name for f in fields)})", col)


def _output_name(item: exp.Expression, i: int) -> str:
    if isinstance(item, exp.Alias):
        return item.alias
    if isinstance(item, exp.Column):
        return item.name
    return f"EXPR${i}"


def _types(ctx: _Ctx, fields, exprs: list[str], node: exp.Expression | None) -> list[FlinkType]:
    schema = T.StructType([T.StructField(f.name, f.type.spark()) for f in fields])
    df = ctx.spark.createDataFrame([], schema)
    try:
        out = df.select(*[F.expr(e) for e in exprs]).schema
    except AnalysisException as e:
        first = str(e).splitlines()[0]
        raise _err(ctx, f"invalid expression: {first}", node) from None
    types = []
    for f in out.fields:
        try:
            types.append(FlinkType.from_spark(f.dataType))
        except ValueError as e:
            raise _err(ctx, str(e), node) from None
    return types


def _project(ctx: _Ctx, child: Node, items: list[exp.Expression]) -> Node:
    exprs, fields = [], []
    by_name = {f.name.lower(): f for f in child.fields}
    for i, item in enumerate(items):
        _check_columns(ctx, item, child.fields)
        body = item.this if isinstance(item, exp.Alias) else item
        name = _output_name(item, i)
        sql = to_spark_sql(_unqualify(body))
        exprs.append((name, sql))
        source = by_name.get(body.name.lower()) if isinstance(body, exp.Column) else None
        fields.append(Field(name, source.type, source.time_attr) if source else None)
    missing = [i for i, f in enumerate(fields) if f is None]
    if missing:
        types = _types(ctx, child.fields, [exprs[i][1] for i in missing], items[missing[0]])
        for i, t in zip(missing, types):
            fields[i] = Field(exprs[i][0], t)
    names = [n.lower() for n, _ in exprs]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise _err(ctx, f"duplicate output column name(s) {dup}; use AS to rename", items[0])
    return Project(child, tuple(exprs), tuple(fields))


def _window_def(ctx: _Ctx, win: exp.Window, windows: dict[str, exp.Window]) -> exp.Window:
    """Resolve ``OVER w`` to its ``WINDOW w AS (...)`` definition."""
    if win.args.get("partition_by") or win.args.get("order") or win.args.get("spec"):
        return win
    name = win.args.get("alias") or win.args.get("this")
    name = name.name if isinstance(name, exp.Expression) else None
    if not name or name.lower() not in windows:
        raise _err(ctx, f"unknown window {name!r} (declare it with WINDOW {name} AS (...))", win)
    return windows[name.lower()]


def _frame(ctx: _Ctx, win: exp.Window) -> Frame:
    spec = win.args.get("spec")
    if spec is None:
        # Flink's default with ORDER BY is RANGE UNBOUNDED PRECEDING AND CURRENT ROW.
        return Frame("RANGE", None)
    kind = spec.args.get("kind", "").upper()
    end = str(spec.args.get("end", "")).upper()
    if spec.args.get("end_side") or end != "CURRENT ROW":
        raise _err(ctx, "OVER frames must end at CURRENT ROW (FOLLOWING is not supported)", win)
    start = spec.args.get("start")
    if str(spec.args.get("start_side", "")).upper() != "PRECEDING" and str(start).upper() != \
            "CURRENT ROW":
        raise _err(ctx, "OVER frames must start at a PRECEDING bound", win)
    if str(start).upper() == "UNBOUNDED":
        return Frame(kind, None)
    if str(start).upper() == "CURRENT ROW":
        return Frame(kind, 0)
    if kind == "ROWS":
        if isinstance(start, exp.Literal) and not start.is_string and start.name.isdigit():
            return Frame("ROWS", int(start.name))
        raise _err(ctx, f"ROWS frames need an integer row count, got {start.sql()}", win)
    ms = interval_ms(start) if isinstance(start, exp.Interval) else None
    if ms is None:
        raise _err(ctx, f"RANGE frames need an INTERVAL, got {start.sql()}", win)
    return Frame("RANGE", ms)


def _definition_key(ctx: _Ctx, win: exp.Window) -> tuple:
    parts = tuple(to_spark_sql(_unqualify(p)).lower() for p in win.args.get("partition_by") or [])
    order = win.args.get("order")
    orders = tuple(o.sql().lower() for o in order.expressions) if order else ()
    return parts, orders, _frame(ctx, win)


def _agg_type(ctx: _Ctx, func: str, arg: FlinkType | None, node) -> FlinkType:
    if func == "COUNT":
        return FlinkType("BIGINT")
    if func in ("MIN", "MAX"):
        return arg
    if not arg.is_numeric:
        raise _err(ctx, f"{func} needs a numeric argument, got {arg.sql()}", node)
    if arg.name == "DECIMAL":
        return FlinkType("DECIMAL", 38, arg.scale if func == "SUM" else max(arg.scale, 6))
    return arg


def _over(ctx: _Ctx, child: Node, items: list[exp.Expression], windows) -> Node:
    """child -> Project(args, partition keys) -> Over -> Project(select list)."""
    definition = None
    calls: list[tuple[exp.Window, exp.Expression]] = []
    for item in items:
        _check_columns(ctx, item, child.fields)
        for win in item.find_all(exp.Window):
            func = win.this
            name = func.key.upper() if isinstance(func, exp.AggFunc) else (
                func.name.upper() if isinstance(func, exp.Anonymous) else func.key.upper())
            if name not in AGGREGATES:
                raise _err(ctx, f"{name}() OVER is not supported (supported: "
                                f"{', '.join(sorted(AGGREGATES))})", win)
            if func.args.get("distinct") or isinstance(func.this, exp.Distinct):
                raise _err(ctx, f"{name}(DISTINCT ...) OVER is not supported", win)
            resolved = _window_def(ctx, win, windows)
            key = _definition_key(ctx, resolved)
            if definition is None:
                definition = (key, resolved)
            elif key != definition[0]:
                raise _err(ctx, "all OVER aggregates of a SELECT must use the same window "
                                "(PARTITION BY, ORDER BY and frame), as in Flink", win)
            calls.append((win, func))
    win = definition[1]
    frame = _frame(ctx, win)
    order = win.args.get("order")
    if not order or len(order.expressions) != 1:
        raise _err(ctx, "OVER windows must ORDER BY exactly one time attribute", win)
    ordered = order.expressions[0]
    if ordered.args.get("desc"):
        raise _err(ctx, "OVER windows must ORDER BY a time attribute ascending", ordered)
    time_col = ordered.this
    by_name = {f.name.lower(): f for f in child.fields}
    tfield = by_name.get(time_col.name.lower()) if isinstance(time_col, exp.Column) else None
    if tfield is None or tfield.time_attr is None:
        raise _err(ctx, f"OVER windows must ORDER BY a time attribute (a rowtime column with a "
                        f"WATERMARK, or PROCTIME()); {ordered.sql()} is not one", ordered)

    # Pre-projection: every input column, plus partition keys and aggregate arguments.
    pre = [(f.name, f"`{f.name}`") for f in child.fields]
    pre_fields = list(child.fields)
    partition = []
    for i, p in enumerate(win.args.get("partition_by") or []):
        _check_columns(ctx, p, child.fields)
        if isinstance(p, exp.Column):
            partition.append(by_name[p.name.lower()].name)
            continue
        sql = to_spark_sql(_unqualify(p))
        pre.append((f"tw__p{i}", sql))
        pre_fields.append(Field(f"tw__p{i}", _types(ctx, child.fields, [sql], p)[0]))
        partition.append(f"tw__p{i}")
    aggs = []
    for i, (w, func) in enumerate(calls):
        name = func.key.upper() if not isinstance(func, exp.Anonymous) else func.name.upper()
        arg_node = func.this if not isinstance(func.this, exp.Star) else None
        arg, arg_type = None, None
        if arg_node is not None:
            sql = to_spark_sql(_unqualify(arg_node))
            arg_type = _types(ctx, child.fields, [sql], arg_node)[0]
            arg = f"tw__a{i}"
            pre.append((arg, sql))
            pre_fields.append(Field(arg, arg_type))
        elif name != "COUNT":
            raise _err(ctx, f"{name}(*) is not valid", w)
        aggs.append(AggCall(name, arg, arg_type, f"tw__o{i}", _agg_type(ctx, name, arg_type, w)))
    pre_node = Project(child, tuple(pre), tuple(pre_fields))
    source = _single_scan(ctx, child, win)
    over = Over(pre_node, tuple(partition), tfield.name, tfield.time_attr, frame, tuple(aggs),
                source, tuple(pre_fields) + tuple(Field(a.name, a.type) for a in aggs))

    # Final projection: each OVER call replaced by its output column.
    replaced = []
    for item in items:
        item = item.copy()
        for w in list(item.find_all(exp.Window)):
            idx = next(i for i, (orig, _) in enumerate(calls) if orig == w)
            w.replace(exp.column(f"tw__o{idx}", quoted=True))
        replaced.append(item)
    return _project(ctx, over, replaced)


def _single_scan(ctx: _Ctx, node: Node, where: exp.Expression):
    from operators_lib.plan import scans

    found = scans(node)
    if len(found) != 1:
        raise _err(ctx, "OVER over more than one input table is not supported", where)
    return found[0].table
