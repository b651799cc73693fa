"""OVER aggregates: ``agg(x) OVER (PARTITION BY .. ORDER BY time ROWS|RANGE BETWEEN ..
PRECEDING AND CURRENT ROW)``, inline or ``WINDOW w AS (...)``, into an ``Over`` plan node."""

from __future__ import annotations

from sqlglot import exp

from operators_lib.plan import AggCall, Field, Frame, Node, Over, scans
from operators_lib.sql.context import Ctx, PreProjection, Scope, key
from operators_lib.sql.ddl import interval_ms
from operators_lib.types import FlinkType

AGGREGATES = {"COUNT", "SUM", "AVG", "MIN", "MAX"}


def agg_name(func: exp.Expression) -> str:
    return func.name.upper() if isinstance(func, exp.Anonymous) else func.key.upper()


def agg_type(ctx: Ctx, func: str, arg: FlinkType | None, node) -> FlinkType:
    """Flink's result type of an aggregate (SUM keeps the argument type, AVG too; DECIMAL SUM
    and AVG widen to precision 38)."""
    if func == "COUNT":
        return FlinkType("BIGINT")
    if func in ("MIN", "MAX"):
        return arg
    if not arg.is_numeric:
        raise ctx.err(f"{func} needs a numeric argument, got {arg.sql()}", node)
    if arg.name == "DECIMAL":
        return FlinkType("DECIMAL", 38, arg.scale if func == "SUM" else max(arg.scale, 6))
    return arg


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


def plan_over(ctx: Ctx, child: Node, items, windows, scope: Scope, project) -> Node:
    """child -> Project(args, partition keys) -> Over -> Project(select list)."""
    definition = None
    calls: list[tuple[exp.Window, exp.Expression]] = []
    for _, item in items:
        for win in item.find_all(exp.Window):
            func = win.this
            name = agg_name(func)
            if name not in AGGREGATES:
                raise ctx.err(f"{name}() OVER is not supported (supported: "
                              f"{', '.join(sorted(AGGREGATES))})", win)
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
        name = agg_name(func)
        arg, arg_type = None, None
        if not isinstance(func.this, exp.Star):
            arg_field = pre.add(func.this, "a")
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
