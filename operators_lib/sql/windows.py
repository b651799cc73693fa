"""Time windows in SQL: group windows (``GROUP BY TUMBLE(ts, ..)``, ``HOP(ts, slide, size)``,
``SESSION(ts, gap)`` with ``TUMBLE_START/_END/_ROWTIME`` and the like) and window TVFs
(``TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size [, offset]))``, ``HOP``, ``CUMULATE``,
``SESSION(TABLE t [PARTITION BY k], DESCRIPTOR(ts), gap)``) followed by a GROUP BY on
``window_start, window_end``. Both become one ``WindowAggregate`` (sql/aggregate.py plans its
keys and aggregates).

A window TVF is planned as ``Windowed`` (the table with its window columns): aggregated by
its window it becomes a ``WindowAggregate``, otherwise its rows (``WindowRows``: each row once
per window, emitted at once, as Flink does). A window aggregate may read another's result
through its ``*_ROWTIME`` / ``window_time`` (a cascade); window TopN / joins and any other
operator over such a result are refused by name until they are implemented.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from operators_lib.catalog import TableDef
from operators_lib.plan import (
    Field,
    Filter,
    Join,
    Node,
    Project,
    Scan,
    SessionRows,
    TimeWindow,
    WindowAggregate,
    WindowRows,
    quote,
)
from operators_lib.sql.context import Ctx, Scope
from operators_lib.sql.ddl import interval_ms
from operators_lib.types import FlinkType

GROUP_WINDOWS = {"TUMBLE": ("size",), "HOP": ("slide", "size"), "SESSION": ("gap",)}
# Group window auxiliary functions -> the window bound they return (*_ROWTIME and *_PROCTIME:
# the window's time, end - 1 ms, as an event-time or a processing-time attribute).
AUXILIARY = {f"{w}_{part}": part for w in GROUP_WINDOWS
             for part in ("START", "END", "ROWTIME", "PROCTIME")}
TVF_ARGS = {"TUMBLE": ("size", "offset"), "HOP": ("slide", "size", "offset"),
            "CUMULATE": ("step", "size", "offset"), "SESSION": ("gap",)}
TVF_BOUNDS = ("window_start", "window_end", "window_time")
BOUND_TYPE = FlinkType("TIMESTAMP", 3)


@dataclass(frozen=True)
class Windowed:
    """A window TVF: the child's rows with their windows (``TVF_BOUNDS`` appended). Only a
    window aggregate consumes it (sql/aggregate.py)."""

    child: Node
    time_col: str
    window: TimeWindow
    fields: tuple[Field, ...]
    call: exp.Expression  # for error messages
    partition: tuple[str, ...] = ()  # SESSION's PARTITION BY columns: one session per key


def is_window_tvf(rel: exp.Expression) -> bool:
    inner = rel.this if isinstance(rel, exp.Table) else None
    return (isinstance(inner, exp.Anonymous) and inner.name.upper() == "TABLE"
            and len(inner.expressions) == 1 and isinstance(inner.expressions[0], exp.Anonymous))


def plan_window_tvf(ctx: Ctx, rel: exp.Table, relation) -> tuple[Windowed, Scope]:
    """``TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size [, offset]))`` and HOP / CUMULATE, with
    positional or named (``DATA =>``, ``TIMECOL =>``, ..) arguments. ``relation`` plans the
    table argument (planner._relation)."""
    call = rel.this.expressions[0]
    kind = call.name.upper()
    if kind not in TVF_ARGS:
        raise ctx.err(f"table function {kind} is not supported (window TVFs: TUMBLE, HOP, "
                      "CUMULATE, SESSION)", call)
    names = ("data", "timecol", *TVF_ARGS[kind])
    args: dict[str, exp.Expression] = {}
    partition = [a for a in call.expressions if isinstance(a, exp.Anonymous)
                 and a.name.upper() == "PARTITION_BY"]  # sql/dialect.rewrite_window_tvfs
    if partition and kind != "SESSION":
        raise ctx.err(f"{kind} takes no PARTITION BY (only SESSION does)", partition[0])
    for i, a in enumerate(a for a in call.expressions if a not in partition):
        if isinstance(a, exp.Kwarg):
            name = a.this.name.lower()
            if name not in names:
                raise ctx.err(f"{kind} has no parameter {a.this.name} (parameters: "
                              f"{', '.join(n.upper() for n in names)})", a)
            args[name] = a.expression
        elif i < len(names):
            args[names[i]] = a
        else:
            raise ctx.err(f"{kind} takes at most {len(names)} arguments", a)
    missing = [n for n in names if n not in args and n != "offset"]
    if missing:
        raise ctx.err(f"{kind} needs {', '.join(m.upper() for m in missing)}", call)
    data = args["data"]
    table = data if isinstance(data, exp.Subquery) else exp.Table(this=data.this) if isinstance(
        data, exp.Column) and not data.table else None
    if table is None:
        raise ctx.err(f"the first argument of {kind} must be TABLE name or a subquery", data)
    child, scope = relation(ctx, table)
    if interval_below(child) is None:  # a window aggregate over an interval join is planned
        ctx.refuse_held_time(child, f"a {kind} window TVF", call)
    desc = args["timecol"]
    if not (isinstance(desc, exp.Anonymous) and desc.name.upper() == "DESCRIPTOR"
            and len(desc.expressions) == 1 and isinstance(desc.expressions[0], exp.Column)):
        raise ctx.err(f"the time column of {kind} is given as DESCRIPTOR(column)", desc)
    time_col = _time_attribute(ctx, scope, child.fields, desc.expressions[0], kind)
    ms = [_interval(ctx, args[n], kind) if n in args else 0 for n in TVF_ARGS[kind]]
    if kind == "TUMBLE":
        window = TimeWindow("TUMBLE", ms[0], ms[0], ms[1])
    elif kind == "SESSION":
        window = TimeWindow("SESSION", ms[0], ms[0])
    else:
        window = TimeWindow(kind, ms[1], ms[0], ms[2])
    window = checked(ctx, window, call)
    taken = {f.name.lower() for f in child.fields}
    clash = [b for b in TVF_BOUNDS if b in taken]
    if clash:
        raise ctx.err(f"{kind} adds the column {clash[0]}, which the table already has", call)
    kind_of_time = next(f.time_attr for f in child.fields if f.name == time_col)
    rowtime = (Field(TVF_BOUNDS[0], BOUND_TYPE), Field(TVF_BOUNDS[1], BOUND_TYPE),
               Field(TVF_BOUNDS[2], BOUND_TYPE, kind_of_time))
    keys = tuple(_column(ctx, scope, child.fields, k, "PARTITION BY")
                 for p in partition for k in p.expressions)
    node = Windowed(child, time_col, window, child.fields + rowtime, call, keys)
    alias = rel.alias or None
    return node, Scope.of(node.fields, alias)


def group_window(ctx: Ctx, call: exp.Anonymous, scope: Scope, fields: tuple[Field, ...]
                 ) -> tuple[str, TimeWindow]:
    """``TUMBLE(ts, size)`` / ``HOP(ts, slide, size)`` / ``SESSION(ts, gap)`` of a GROUP BY:
    (time column, window)."""
    kind = call.name.upper()
    params = GROUP_WINDOWS.get(kind)
    if params is None:
        raise ctx.err(f"group window {kind}(..) is not supported yet", call)
    args = call.expressions
    if len(args) != 1 + len(params):
        raise ctx.err(f"{kind} takes a time attribute and {' and '.join(params)}", call)
    time_col = _time_attribute(ctx, scope, fields, args[0], kind)
    ms = [_interval(ctx, a, kind) for a in args[1:]]
    window = TimeWindow(kind, ms[0], ms[0]) if kind != "HOP" else TimeWindow("HOP", ms[1], ms[0])
    return time_col, checked(ctx, window, call)


def checked(ctx: Ctx, w: TimeWindow, node: exp.Expression) -> TimeWindow:
    if w.size_ms <= 0 or w.step_ms <= 0:
        raise ctx.err(f"{w.kind}: window sizes must be positive", node)
    if w.kind == "CUMULATE" and w.size_ms % w.step_ms:
        raise ctx.err("CUMULATE: the max size must be a multiple of the step", node)
    if w.kind == "HOP" and w.size_ms % w.step_ms:
        raise ctx.err("HOP: the size must be a multiple of the slide", node)
    if abs(w.offset_ms) >= w.size_ms and w.kind == "TUMBLE":
        raise ctx.err("TUMBLE: the offset must be smaller than the size", node)
    return w


def _time_attribute(ctx: Ctx, scope: Scope, fields: tuple[Field, ...], col: exp.Expression,
                    kind: str) -> str:
    resolved = scope.resolve(ctx, col)
    field = next((f for f in fields if isinstance(resolved, exp.Column)
                  and f.name == resolved.name), None)
    if field is None or field.time_attr is None:
        raise ctx.err(f"{kind} needs a time attribute (a column with a WATERMARK, or "
                      f"PROCTIME()); {col.sql()} is not one", col)
    return field.name


def _column(ctx: Ctx, scope: Scope, fields: tuple[Field, ...], col: exp.Expression,
            what: str) -> str:
    resolved = scope.resolve(ctx, col)
    if not isinstance(resolved, exp.Column) or resolved.name not in {f.name for f in fields}:
        raise ctx.err(f"{what} takes columns of the table; {col.sql()} is not one", col)
    return resolved.name


def _interval(ctx: Ctx, node: exp.Expression, kind: str) -> int:
    ms = interval_ms(node) if isinstance(node, exp.Interval) else None
    if ms is None:
        raise ctx.err(f"{kind}: expected an interval literal such as INTERVAL '1' MINUTE",
                      node)
    return ms


def tvf_below(node: Node) -> Windowed | None:
    """The window TVF under a node's WHERE filters, if any."""
    while isinstance(node, Filter):
        node = node.child
    return node if isinstance(node, Windowed) else None


def as_rows(ctx: Ctx, node: Node) -> Node:
    """The window TVF under WHERE filters as its rows (``WindowRows``): a query that does not
    aggregate it by window."""
    if isinstance(node, Filter):
        child = as_rows(ctx, node.child)
        return Filter(child, node.condition, child.fields)
    ctx.refuse_held_time(node.child, f"the rows of TABLE({node.window.kind}(..))", node.call)
    if node.fields[-1].time_attr == "proctime":
        raise ctx.err(f"the rows of TABLE({node.window.kind}(..)) over a processing-time "
                      "attribute without an aggregation by window_start, window_end are not "
                      "supported yet", node.call)
    if node.window.kind == "SESSION":
        source = source_table(node.child)
        if source is None:
            raise ctx.err("the rows of TABLE(SESSION(..)) over a join, an aggregate or a "
                          "window are not supported yet", node.call)
        return SessionRows(node.child, node.time_col, node.window, node.partition,
                           node.fields, source)
    return WindowRows(node.child, node.time_col, node.window, node.fields)


def unwrap(ctx: Ctx, node: Node, where: exp.Expression) -> tuple[Windowed | None, Node]:
    """A window TVF under WHERE filters: (the TVF, its child with the filters on it). A filter
    on the window columns themselves is refused (``where``: the node to name)."""
    filters: list[Filter] = []
    below = node
    while isinstance(below, Filter):
        filters.append(below)
        below = below.child
    if not isinstance(below, Windowed):
        return None, node  # the filters stay: they apply to whatever is aggregated
    child = below.child
    for f in reversed(filters):
        if any(quote(b) in f.condition for b in TVF_BOUNDS):
            raise ctx.err("a WHERE on window_start / window_end / window_time before the "
                          "window aggregation is not supported yet", where)
        child = Filter(child, f.condition, child.fields)
    return below, child


def traced(node: Node, cols) -> tuple[Node, dict[str, str]]:
    """The node below ``node``'s projections and filters, and which of its columns ``cols``
    (of ``node``) copy: {its column: column of ``cols``}."""
    names = {c: c for c in cols}  # column of the current node -> column of ``cols``
    while isinstance(node, (Project, Filter)):
        if isinstance(node, Project):
            exprs = dict(node.exprs)
            names = {exprs[n][1:-1].replace("``", "`"): c for n, c in names.items()
                     if exprs.get(n, "").startswith("`") and exprs[n].endswith("`")}
        node = node.child
    return node, names


def window_grouping(kind: str, partition: tuple[str, ...], grouped: set[str | None]) -> bool:
    """Is a GROUP BY of a window TVF's columns ``grouped`` (None: an expression) a window
    aggregation, as Flink plans it? It groups by window_start and window_end, and a SESSION
    TVF's by exactly its PARTITION BY columns besides."""
    return {"window_start", "window_end"} <= grouped and (
        kind != "SESSION" or grouped - set(TVF_BOUNDS) == set(partition))


def window_grouped(node: Node, group_by: tuple[str, ...]) -> bool:
    """Does a GROUP BY ``group_by`` of ``node`` group a window TVF's rows below it by their
    window (``window_grouping``)?"""
    below, names = traced(node, group_by)
    if not isinstance(below, (WindowRows, SessionRows)):
        return False
    grouped = set(names) | ({None} if len(names) < len(group_by) else set())
    partition = below.partition if isinstance(below, SessionRows) else ()
    return window_grouping(below.window.kind, partition, grouped)


def windowed_by(node: Node, cols: tuple[str, ...] | list[str]
                ) -> tuple[str | None, tuple[str, ...]]:
    """Do ``cols`` of ``node`` hold the window start and end of a window aggregate's result or
    of a SESSION TVF's rows ("aggregate": a window's rows arrive together, when it fires) or of
    a window TVF's rows ("rows") that ``node`` carries (through projections
    and filters)? (the kind or None, the two columns of ``cols``) - window TopN, window join."""
    node, names = traced(node, cols)
    if isinstance(node, WindowAggregate):
        kind, bounds = "aggregate", node.bounds[:2]
    elif isinstance(node, SessionRows):
        # A session's rows leave together when it fires, as a window aggregate's result does.
        kind, bounds = "aggregate", tuple(f.name for f in node.fields[-3:-1])
    elif isinstance(node, WindowRows):
        kind, bounds = "rows", tuple(f.name for f in node.fields[-3:-1])
    else:
        return None, ()
    if not set(bounds) <= set(names):
        return None, ()
    return kind, tuple(names[b] for b in bounds)


def processing_time_window(node: Node) -> bool:
    """Does a node carry the result of a processing-time window aggregate?"""
    below = window_below(node)
    return below is not None and below.time_kind == "proctime"


def window_below(node: Node) -> WindowAggregate | None:
    """The window aggregate whose result reaches a node through filters and projections (a
    cascade of windows)."""
    while isinstance(node, (Filter, Project)):
        node = node.child
    return node if isinstance(node, WindowAggregate) else None


def interval_below(node: Node) -> Join | None:
    """The interval join whose result reaches a node through filters and projections."""
    while isinstance(node, (Filter, Project)):
        node = node.child
    return node if isinstance(node, Join) and node.interval is not None else None


def source_table(node: Node) -> TableDef | None:
    """The one table whose rows reach a window aggregate (through filters and projections)."""
    while isinstance(node, (Filter, Project)):
        node = node.child
    return node.table if isinstance(node, Scan) else None
