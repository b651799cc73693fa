"""OVER aggregates: ``agg(x) OVER (PARTITION BY .. ORDER BY time ROWS|RANGE BETWEEN ..
PRECEDING AND CURRENT ROW)``, inline or ``WINDOW w AS (...)``, into an ``Over`` plan node."""

from __future__ import annotations

from sqlglot import exp

from operators_lib.plan import AggCall, Field, Frame, Node, Over, scans
from operators_lib.sql.context import Ctx, PreProjection, Scope, key
from operators_lib.sql.ddl import interval_ms
from operators_lib.types import FlinkType

# name -> (population: divided by COUNT, not COUNT - 1; square root). Flink reduces them
# (its copy of Calcite's AggregateReduceFunctionsRule) to M2 (Welford's sum of squared
# deviations, in DOUBLE) and COUNT, but over an OVER window to SUM(x * x), SUM(x) and COUNT(x)
# in the result type (Calcite's AvgVarianceConvertlet): two formulas, two rounding behaviours.
VARIANCE = {"STDDEV_POP": (True, True), "STDDEV_SAMP": (False, True), "STDDEV": (False, True),
            "VAR_POP": (True, False), "VAR_SAMP": (False, False), "VARIANCE": (False, False)}
# Aggregates of the input's arrival order (an ordered list of values per group).
ORDERED = ("FIRST_VALUE", "LAST_VALUE", "LISTAGG")
AGGREGATES = {"COUNT", "SUM", "AVG", "MIN", "MAX", *VARIANCE, *ORDERED}
# Internal aggregates the planner adds (never written in a query): Welford's M2.
M2 = "M2"


def agg_name(func: exp.Expression) -> str:
    if isinstance(func, (exp.Anonymous, exp.AnonymousAggFunc)):
        return func.name.upper()
    return func.key.upper()


def agg_arg(func: exp.Expression) -> exp.Expression:
    """The (first) argument of an aggregate call (``LISTAGG(x, sep)``: x)."""
    return func.expressions[0] if isinstance(func, exp.AnonymousAggFunc) else func.this


def agg_type(ctx: Ctx, func: str, arg: FlinkType | None, node) -> FlinkType:
    """Flink's result type of an aggregate (SUM keeps the argument type, AVG and the
    statistical ones too; DECIMAL SUM and AVG widen to precision 38; LISTAGG is a STRING)."""
    if func == "COUNT":
        return FlinkType("BIGINT")
    if func in ("MIN", "MAX", "FIRST_VALUE", "LAST_VALUE"):
        return arg
    if func == "LISTAGG":
        if arg.name not in ("STRING", "CHAR", "VARCHAR"):
            raise ctx.err(f"LISTAGG needs a STRING argument, got {arg.sql()}", node)
        return FlinkType("STRING")
    if func == M2:
        return FlinkType("DOUBLE")
    if not arg.is_numeric:
        raise ctx.err(f"{func} needs a numeric argument, got {arg.sql()}", node)
    if arg.name == "DECIMAL":
        return FlinkType("DECIMAL", 38, arg.scale if func == "SUM" else max(arg.scale, 6))
    return arg


def template(text: str, **parts: exp.Expression) -> exp.Expression:
    """``text`` (Flink SQL) parsed, each column named in ``parts`` replaced by its
    expression."""
    from operators_lib.sql.dialect import parse_expression

    tree = parse_expression(text)
    for col in list(tree.find_all(exp.Column)):
        if col.name in parts:
            col.replace(parts[col.name].copy())
    return tree


def variance_over(ctx: Ctx, win: exp.Window, fields) -> exp.Expression:
    """``VAR_POP(x) OVER w`` and the like as Flink computes them (Calcite's
    AvgVarianceConvertlet): every step cast to the result type T, so integers add, multiply
    and divide in T (wrapping, truncating):
    ``CAST((S2 - CAST(S * S AS T) / CAST(C AS T)) / (C or CASE C WHEN 1 THEN NULL ELSE C - 1
    END) AS T)`` with S2 = SUM(CAST(x * x AS T)), S = SUM(x), C = COUNT(x) over w; STDDEV_*
    take POWER(.., 0.5) of the cast variance."""
    func = win.this
    name = agg_name(func)
    if len(func.expressions) != 1 or isinstance(func.expressions[0], exp.Distinct):
        raise ctx.err(f"{name}(DISTINCT ...) OVER is not supported", win)
    arg = func.expressions[0]
    arg_type = ctx.types(fields, [ctx.sql(arg, fields)], arg)[0]
    t = agg_type(ctx, name, arg_type, win)
    if not (t.is_integral or t.name == "DOUBLE"):
        # FLOAT: Flink adds in float (twinflow's OVER sums in double); DECIMAL: Flink's
        # decimal arithmetic rules for each cast step are not reproduced.
        raise ctx.err(f"{name}(..) OVER a {arg_type.sql()} argument is not supported "
                      "(INTEGER types and DOUBLE are)", win)
    pop, root = VARIANCE[name]

    def over(agg: exp.Expression) -> exp.Expression:
        w = win.copy()
        w.set("this", agg)
        return w

    x = template(f"CAST(x AS {t.sql()})", x=arg)
    parts = {"s2": over(template(f"SUM(CAST(x * x AS {t.sql()}))", x=x)),
             "s": over(exp.Sum(this=x.copy())), "c": over(exp.Count(this=x.copy()))}
    den = f"CAST(c AS {t.sql()})" if pop else \
        f"CASE WHEN c = 1 THEN CAST(NULL AS {t.sql()}) ELSE c - 1 END"
    div = (f"CAST(CAST(s2 AS {t.sql()}) - CAST(CAST(CAST(s AS {t.sql()}) * CAST(s AS "
           f"{t.sql()}) AS {t.sql()}) / CAST(c AS {t.sql()}) AS {t.sql()}) AS {t.sql()}) / {den}")
    text = f"CAST(POWER(CAST({div} AS {t.sql()}), 0.5) AS {t.sql()})" if root else \
        f"CAST({div} AS {t.sql()})"
    return template(text, **parts)


def _window_def(ctx: Ctx, win: exp.Window, windows: dict[str, exp.Window],
                scope: Scope) -> exp.Window:
    """Resolve ``OVER w`` to its ``WINDOW w AS (...)`` definition."""
    if win.args.get("partition_by") or win.args.get("order") or win.args.get("spec"):
        return win
    name = win.args.get("alias") or win.args.get("this")
    name = name.name if isinstance(name, exp.Expression) else None
    if not name or name.lower() not in windows:
        raise ctx.err(f"unknown window {name!r} (declare it with WINDOW {name} AS (...))", win)
    return scope.resolve(ctx, windows[name.lower()])


def _frame(ctx: Ctx, win: exp.Window) -> Frame:
    spec = win.args.get("spec")
    if spec is None:
        # Flink's default with ORDER BY is RANGE UNBOUNDED PRECEDING AND CURRENT ROW.
        return Frame("RANGE", None)
    kind = spec.args.get("kind", "").upper()
    end = str(spec.args.get("end", "")).upper()
    if spec.args.get("end_side") or end != "CURRENT ROW":
        raise ctx.err("OVER frames must end at CURRENT ROW (FOLLOWING is not supported)", win)
    start = spec.args.get("start")
    if str(spec.args.get("start_side", "")).upper() != "PRECEDING" and str(start).upper() != \
            "CURRENT ROW":
        raise ctx.err("OVER frames must start at a PRECEDING bound", win)
    if str(start).upper() == "UNBOUNDED":
        return Frame(kind, None)
    if str(start).upper() == "CURRENT ROW":
        return Frame(kind, 0)
    if kind == "ROWS":
        if isinstance(start, exp.Literal) and not start.is_string and start.name.isdigit():
            return Frame("ROWS", int(start.name))
        raise ctx.err(f"ROWS frames need an integer row count, got {start.sql()}", win)
    if isinstance(start, exp.Literal) and not start.is_string and start.name.isdigit():
        return Frame("RANGE", int(start.name), numeric=True)  # a numeric ORDER BY's units
    ms = interval_ms(start) if isinstance(start, exp.Interval) else None
    if ms is None:
        raise ctx.err(f"RANGE frames need an INTERVAL (or, over a numeric ORDER BY, an "
                      f"integer), got {start.sql()}", win)
    return Frame("RANGE", ms)


def _definition_key(ctx: Ctx, win: exp.Window) -> tuple:
    parts = tuple(key(p).lower() for p in win.args.get("partition_by") or [])
    order = win.args.get("order")
    orders = tuple(o.sql().lower() for o in order.expressions) if order else ()
    return parts, orders, _frame(ctx, win)


def _expand_variance(ctx: Ctx, item: exp.Expression, fields) -> exp.Expression:
    """``item`` with each statistical aggregate over a window expanded (variance_over)."""
    def expand(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Window) and agg_name(node.this) in VARIANCE:
            return variance_over(ctx, node, fields)
        return node

    return item.transform(expand)


def plan_over(ctx: Ctx, child: Node, items, windows, scope: Scope, project) -> Node:
    """child -> Project(args, partition keys) -> Over -> Project(select list)."""
    definition = None
    calls: list[tuple[exp.Window, exp.Expression]] = []
    items = [(name, _expand_variance(ctx, item, child.fields)) for name, item in items]
    for _, item in items:
        for win in item.find_all(exp.Window):
            func = win.this
            name = agg_name(func)
            if name == "LISTAGG":
                raise ctx.err(f"{name} over an OVER window is not supported", win)
            if name not in AGGREGATES:
                raise ctx.err(f"{name}() OVER is not supported (supported: "
                              f"{', '.join(sorted(AGGREGATES - {'LISTAGG'}))})", win)
            if func.args.get("distinct") or isinstance(func.this, exp.Distinct):
                raise ctx.err(f"{name}(DISTINCT ...) OVER is not supported", win)
            resolved = _window_def(ctx, win, windows, scope)
            key = _definition_key(ctx, resolved)
            if definition is None:
                definition = (key, resolved)
            elif key != definition[0]:
                raise ctx.err("all OVER aggregates of a SELECT must use the same window "
                              "(PARTITION BY, ORDER BY and frame), as in Flink", win)
            calls.append((win, func))
    win = definition[1]
    frame = _frame(ctx, win)
    order = win.args.get("order")
    if not order or len(order.expressions) != 1:
        raise ctx.err("OVER windows must ORDER BY exactly one time attribute", win)
    ordered = order.expressions[0]
    if ordered.args.get("desc"):
        raise ctx.err("OVER windows must ORDER BY a time attribute ascending", ordered)
    time_col = ordered.this
    by_name = {f.name: f for f in child.fields}
    tfield = by_name.get(time_col.name) if isinstance(time_col, exp.Column) else None
    if tfield is None:
        raise ctx.err(f"OVER windows must ORDER BY a column (a time attribute in stream "
                      f"mode); {ordered.sql()} is none", ordered)
    if tfield.time_attr:
        ctx.refuse_held_time(child, "an OVER window", ordered)
        if frame.numeric:
            raise ctx.err(f"a RANGE frame over the time attribute {tfield.name} needs an "
                          "INTERVAL", win)
    elif frame.kind == "RANGE" and frame.preceding is not None and (
            frame.numeric != (tfield.type.is_numeric) or not frame.numeric
            and not tfield.type.is_timestamp):
        raise ctx.err(f"a RANGE frame over {tfield.name} ({tfield.type.sql()}) needs "
                      f"{'a number' if tfield.type.is_numeric else 'an INTERVAL'} PRECEDING",
                      win)

    # Pre-projection: every input column, plus partition keys and aggregate arguments.
    pre = PreProjection(ctx, child)
    partition = [pre.column(p, "p") for p in win.args.get("partition_by") or []]
    aggs, outputs = [], []
    for w, func in calls:
        name = agg_name(func)  # the variance is expanded above
        arg, arg_type = None, None
        if isinstance(func, exp.AnonymousAggFunc) and len(func.expressions) != 1:
            raise ctx.err(f"{name} OVER takes one argument", w)
        if not isinstance(agg_arg(func), exp.Star):
            arg_field = pre.add(agg_arg(func), "a")
            arg, arg_type = arg_field.name, arg_field.type
        elif name != "COUNT":
            raise ctx.err(f"{name}(*) is not valid", w)
        out = ctx.hidden("o")
        outputs.append(out)
        aggs.append(AggCall(name, arg, arg_type, out, agg_type(ctx, name, arg_type, w)))
    pre_node = pre.node()
    found = scans(child)
    if len(found) != 1:
        raise ctx.err("OVER over more than one input table is not supported", win)
    over = Over(pre_node, tuple(partition), tfield.name, tfield.time_attr, frame, tuple(aggs),
                found[0].table, tuple(pre.fields) + tuple(Field(a.name, a.type) for a in aggs))

    # Final projection: each OVER call replaced by its output column.
    replaced = []
    for name, item in items:
        item = item.copy()
        for w in list(item.find_all(exp.Window)):
            idx = next(i for i, (orig, _) in enumerate(calls) if orig == w)
            new = exp.column(outputs[idx], quoted=True)
            if w is item:
                item = new
            else:
                w.replace(new)
        replaced.append((name, item))
    return project(ctx, over, replaced)
