"""Joins: ``[INNER | LEFT | RIGHT | FULL [OUTER]] JOIN .. ON`` and comma joins.

A join whose condition bounds a rowtime attribute of one input by one of the other from below
and above (``l.ts BETWEEN r.ts - INTERVAL .. AND r.ts + INTERVAL ..``, ``>=``/``>``/``<=``/
``<``, or one ``=``) is Flink's interval join (plan.Interval), as IntervalJoinUtil decides;
any other, including a time range against a column that is no time attribute, is a regular
join.

The ON condition is split into equality keys (``left_expr = right_expr``, each side reading
one input) and a residual ``Cond``. Every expression that reads a single side is computed by Spark
before the join, as a hidden column; what remains for the join operator is comparisons between
a left and a right column and AND/OR/NOT, which both modes evaluate with SQL's NULL rules. Keys
and compared columns of different types are cast to their common type (Spark's coercion).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from sqlglot import exp

from operators_lib.plan import (
    Calc,
    Cond,
    Field,
    Filter,
    Interval,
    Join,
    Node,
    Project,
    Rank,
    Scan,
    Temporal,
    quote,
    unique_key,
)
from operators_lib.sql.context import Ctx, Scope, referenced, uniquify
from operators_lib.sql.ddl import interval_ms
from operators_lib.sql.windows import processing_time_window, source_table, windowed_by

JOIN_KINDS = ("INNER", "LEFT", "RIGHT", "FULL")  # SEMI and ANTI come from subqueries
_CMP = {exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">=",
        exp.NullSafeEQ: "<=>"}
_FLIP = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<=", "<=>": "<=>"}


def split_and(node: exp.Expression) -> list[exp.Expression]:
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.And):
        return split_and(node.this) + split_and(node.expression)
    return [node]


class _Sides:
    """Collects the hidden pre-join columns of the two inputs."""

    def __init__(self, ctx: Ctx, left: Node, right: Node):
        self.ctx = ctx
        self.nodes = {"L": left, "R": right}
        self.names = {"L": {f.name for f in left.fields}, "R": {f.name for f in right.fields}}
        self.extra: dict[str, list[tuple[str, str, Field]]] = {"L": [], "R": []}
        self.both = list(left.fields) + list(right.fields)

    def side(self, node: exp.Expression) -> str:
        cols = referenced(node)
        if not cols:
            return "C"
        if cols <= self.names["L"]:
            return "L"
        if cols <= self.names["R"]:
            return "R"
        return "B"

    def type_of(self, node: exp.Expression):
        return self.ctx.types(self.both, [self.ctx.sql(node, self.both)], node)[0]

    def column(self, side: str, node: exp.Expression, cast=None) -> str:
        """The column of ``side`` holding ``node`` (cast to ``cast``): itself if it is one."""
        if cast is None and isinstance(node, exp.Column):
            return node.name
        text = self.ctx.sql(node, self.nodes[side].fields)
        if cast is not None:
            text = f"CAST({text} AS {cast.spark().simpleString()})"
        for name, existing, _ in self.extra[side]:
            if existing == text:
                return name
        name = self.ctx.hidden("j")
        t = cast or self.ctx.types(self.nodes[side].fields, [text], node)[0]
        self.extra[side].append((name, text, Field(name, t)))
        return name

    def pair(self, a: exp.Expression, b: exp.Expression) -> tuple[str, str]:
        """Left and right columns for ``a`` (left side) vs ``b`` (right side), one type."""
        ta, tb = self.type_of(a), self.type_of(b)
        common = None
        if ta != tb:
            common = self.ctx.types(self.both, [
                f"coalesce({self.ctx.sql(a, self.both)}, {self.ctx.sql(b, self.both)})"], a)[0]
        return (self.column("L", a, None if common == ta else common),
                self.column("R", b, None if common == tb else common))

    def child(self, side: str) -> Node:
        node, extra = self.nodes[side], self.extra[side]
        if not extra:
            return node
        exprs = [(f.name, quote(f.name)) for f in node.fields] + [(n, t) for n, t, _ in extra]
        return Project(node, tuple(exprs), tuple(node.fields) + tuple(f for _, _, f in extra))


Condition = exp.Expression | Callable[[Scope, Scope], exp.Expression]


def plan_join(ctx: Ctx, left: Node, lscope: Scope, right: Node, rscope: Scope, kind: str,
              conds: list[Condition], where: exp.Expression,
              as_of: exp.Expression | None = None) -> tuple[Join, Scope]:
    """A Join node and the scope after it. ``conds``: ON conjuncts, or functions that build a
    resolved conjunct from the (left, right) scopes (subquery predicates). SEMI/ANTI joins
    output the left columns only. ``as_of``: the left time of a temporal join
    (``FOR SYSTEM_TIME AS OF``)."""
    # Right columns whose names clash with left ones are renamed (Flink: id -> id0).
    names = [f.name for f in right.fields]
    new_names = uniquify(names, {f.name for f in left.fields})
    mapping = {a: b for a, b in zip(names, new_names) if a != b}
    if mapping:
        fields = tuple(Field(mapping.get(f.name, f.name), f.type, f.time_attr)
                       for f in right.fields)
        right = Project(right, tuple((f.name, quote(o.name)) for f, o in zip(fields,
                                                                           right.fields)), fields)
        rscope = rscope.renamed(mapping)
    scope = lscope + rscope
    temporal, versions_key = None, None
    if as_of is not None:
        temporal, right, versions_key = _temporal(ctx, left, right, kind,
                                                  lscope.resolve(ctx, as_of), where)
    sides = _Sides(ctx, left, right)
    lkeys, rkeys, residual = [], [], []
    resolved_conds = []
    for cond in conds:
        resolved = cond(lscope, rscope) if callable(cond) else scope.resolve(ctx, cond)
        while isinstance(resolved, exp.Paren):
            resolved = resolved.this
        resolved_conds.append(resolved)
    interval, timed = None, []
    if kind in JOIN_KINDS and temporal is None:
        interval, timed, resolved_conds = _interval(ctx, left, right, resolved_conds, where)
    for resolved in resolved_conds:
        if isinstance(resolved, exp.EQ):
            a, b = resolved.this, resolved.expression
            sa, sb = sides.side(a), sides.side(b)
            if (sa, sb) in (("L", "R"), ("R", "L")):
                if sa == "R":
                    a, b = b, a
                lcol, rcol = sides.pair(a, b)
                lkeys.append(lcol)
                rkeys.append(rcol)
                continue
        residual.append(resolved)
    windowed = _window_join(sides.child("L"), sides.child("R"), lkeys, rkeys)
    if windowed and interval:  # a window join first, as in Flink: its time bounds a residual
        residual += timed
        interval = None
    cond = _cond(ctx, sides, exp.and_(*residual) if len(residual) > 1 else residual[0]) \
        if residual else None
    left, right = sides.child("L"), sides.child("R")
    ttl = ctx.catalog.state_ttl_ms
    if windowed and (processing_time_window(left) or processing_time_window(right)):
        raise ctx.err("a window join of processing-time windows is not supported yet", where)
    if temporal and temporal.lookup and not rkeys:
        raise ctx.err("a lookup join (FOR SYSTEM_TIME AS OF a PROCTIME() column, a table "
                      "without PRIMARY KEY and WATERMARK) needs an equality condition on the "
                      "table's columns, as Flink requires", where)
    if temporal:
        if not set(versions_key) <= set(rkeys):
            shown = {v: k for k, v in mapping.items()}  # the names the query knows
            names = ", ".join(shown.get(k, k) for k in versions_key)
            raise ctx.err(f"a temporal join's ON condition must equate every column of the "
                          f"versioned side's key ({names}) with the left input, as Flink "
                          "requires", where)
        fields = left.fields + tuple(Field(f.name, f.type) for f in right.fields)
        return Join(left, right, kind, tuple(lkeys), tuple(rkeys), cond, fields,
                    temporal=temporal), scope
    if interval:
        # Flink's interval join keeps its inputs' time attributes and cleans its state by
        # watermark (no state TTL).
        return Join(left, right, kind, tuple(lkeys), tuple(rkeys), cond,
                    left.fields + right.fields, interval=interval), scope
    if kind in ("SEMI", "ANTI"):
        return Join(left, right, kind, tuple(lkeys), tuple(rkeys), cond, left.fields,
                    ttl, windowed), lscope
    # Time attributes do not survive a regular join (Flink makes them plain timestamps).
    fields = tuple(Field(f.name, f.type) for f in left.fields + right.fields)
    return Join(left, right, kind, tuple(lkeys), tuple(rkeys), cond, fields, ttl,
                windowed), scope


def _temporal(ctx: Ctx, left: Node, right: Node, kind: str, as_of: exp.Expression,
              where: exp.Expression) -> tuple[Temporal, Node, tuple[str, ...]]:
    """(the temporal join, the versions' rows, the versions' key) for ``JOIN right FOR
    SYSTEM_TIME AS OF as_of``, as Flink's planner accepts it: INNER or LEFT, a time attribute
    of the left input (a PROCTIME() column: the latest version when a row arrives, which Flink
    runs against lookup tables only), a versioned side that is a table with a PRIMARY KEY and
    a WATERMARK (processing time: the WATERMARK may be missing; with neither, a lookup join:
    ``Temporal.lookup``), or a view
    keeping the latest row per key by its rowtime (``ROW_NUMBER() OVER (PARTITION BY k ORDER
    BY ts DESC) = 1``), which this replaces by its input's rows (``Temporal.dedup``)."""
    if kind not in ("INNER", "LEFT"):
        raise ctx.err(f"a temporal join is INNER or LEFT; {kind} is not supported (nor by "
                      "Flink)", where)
    field = next((f for f in left.fields if isinstance(as_of, exp.Column)
                  and f.name == as_of.name), None)
    if field is None or field.time_attr is None:
        raise ctx.err(f"FOR SYSTEM_TIME AS OF takes a time attribute of the left input; "
                      f"{as_of.sql()} is not one", where)
    if source_table(left) is None:
        raise ctx.err("a temporal join over the result of a join, an aggregation, OVER, a "
                      "window or a UNION is not supported yet (only over tables, filtered or "
                      "projected)", where)
    key, chain, node = unique_key(right), [], right
    while isinstance(node, (Filter, Project)):
        chain.append(node)
        node = node.child
    shape = ("the versioned side of a temporal join is a table with a PRIMARY KEY and a "
             "WATERMARK, or a view keeping its latest row per key (ROW_NUMBER() OVER "
             "(PARTITION BY k ORDER BY ts DESC) = 1)")
    dedup = isinstance(node, Rank) and node.dedup == "last" and node.time_kind == "rowtime"
    if dedup and source_table(node.child) is not None:
        keep = tuple((f.name, quote(f.name)) for f in node.child.fields)
        versions: Node = Project(node.child, (*keep, (node.rank_field, "CAST(1 AS BIGINT)")),
                                 node.fields)
        for above in reversed(chain):
            versions = replace(above, child=versions)
    elif isinstance(node, Scan) and node.table.primary_key:
        versions = right
    elif isinstance(node, Scan) and field.time_attr == "proctime" and not (
            node.table.watermark or node.table.primary_key or node.table.constant):
        # Flink's lookup join (a lookup source: JDBC, HBase, the legacy CSV source of
        # nexmark's q13): every row of the table with the keys, looked up when a row arrives
        return Temporal(field.name, None, False, "proctime", lookup=True), right, ()
    else:
        raise ctx.err(shape, where)
    rowtime = [f.name for f in right.fields if f.time_attr == "rowtime"]
    if not key or len(rowtime) > 1 or (not rowtime and field.time_attr == "rowtime"):
        raise ctx.err(shape + f"; {'it has no key' if not key else 'it has no rowtime'}",
                      where)
    return Temporal(field.name, rowtime[0] if rowtime else None, dedup,
                    field.time_attr), versions, key


_BOUND = {exp.GTE: ">=", exp.GT: ">", exp.LTE: "<=", exp.LT: "<", exp.EQ: "="}


def _interval(ctx: Ctx, left: Node, right: Node, conds: list[exp.Expression],
              where: exp.Expression
              ) -> tuple[Interval | None, list[exp.Expression], list[exp.Expression]]:
    """(the interval, its time predicates, the other conjuncts) when ``conds`` bound one time
    attribute of each input from below and above; else (None, [], conds)."""
    times = {"L": {f.name: f.time_attr for f in left.fields if f.time_attr},
             "R": {f.name: f.time_attr for f in right.fields if f.time_attr}}
    pair, lower, upper, timed, rest = None, None, None, [], []
    for cond in conds:
        parts = [cond]
        if isinstance(cond, exp.Between):
            parts = [exp.GTE(this=cond.this, expression=cond.args["low"]),
                     exp.LTE(this=cond.this, expression=cond.args["high"])]
        bounds = [_time_bound(p, times) for p in parts]
        if any(b is None for b in bounds) or (pair and any(b[0] != pair for b in bounds)):
            rest.append(cond)
            continue
        for cols, low, high in bounds:
            pair = cols
            lower = low if lower is None or (low is not None and low > lower) else lower
            upper = high if upper is None or (high is not None and high < upper) else upper
        timed.append(cond)
    if lower is None or upper is None:
        return None, [], conds
    kinds = {times["L"][pair[0]], times["R"][pair[1]]}
    if kinds != {"rowtime"}:
        raise ctx.err("an interval join over processing time (or over a processing-time and "
                      "an event-time attribute) is not supported yet", where)
    if source_table(left) is None or source_table(right) is None:
        # Rows of a stateful operator reach it when their time has passed the watermark.
        raise ctx.err("an interval join over the result of a join, an aggregation, OVER, a "
                      "window or a UNION is not supported yet (only over tables, filtered or "
                      "projected)", where)
    return Interval(pair[0], pair[1], lower, upper), timed, rest


def _time_bound(node: exp.Expression, times: dict[str, dict[str, str]]
                ) -> tuple[tuple[str, str], int | None, int | None] | None:
    """``node`` as ((left time, right time), lower, upper) of ``left - right`` in ms, if it
    compares a time attribute of each input, each plus or minus constant intervals."""
    op = _BOUND.get(type(node))
    if op is None:
        return None
    a, b = _time_offset(node.this), _time_offset(node.expression)
    if a is None or b is None:
        return None
    (x, ox), (y, oy) = a, b
    if x in times["L"] and y in times["R"]:  # x + ox op y + oy: x - y op oy - ox
        cols, c = (x, y), oy - ox
    elif x in times["R"] and y in times["L"]:  # y - x flipped op ox - oy
        cols, c, op = (y, x), ox - oy, {">=": "<=", ">": "<", "<=": ">=", "<": ">"}.get(op, op)
    else:
        return None
    return cols, {">=": c, ">": c + 1, "=": c}.get(op), {"<=": c, "<": c - 1, "=": c}.get(op)


def _time_offset(node: exp.Expression) -> tuple[str, int] | None:
    """``column [+|- INTERVAL ..]*`` as (column, offset in ms)."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Column):
        return node.name, 0
    if isinstance(node, (exp.Add, exp.Sub)):
        a, b = node.this, node.expression
        if isinstance(node, exp.Add) and interval_ms(a) is not None:
            a, b = b, a
        ms, inner = interval_ms(b), _time_offset(a)
        if ms is not None and inner is not None:
            return inner[0], inner[1] + (ms if isinstance(node, exp.Add) else -ms)
    return None


def _window_join(left: Node, right: Node, lkeys: list[str], rkeys: list[str]) -> str | None:
    """Do both sides carry window aggregates ("aggregate") or window TVFs' rows ("rows") whose
    window start and end the equality keys pair up (Flink's window join)?"""
    lkind, lb = windowed_by(left, lkeys)
    rkind, rb = windowed_by(right, rkeys)
    same = lkind == rkind and [lkeys.index(c) for c in lb] == [rkeys.index(c) for c in rb]
    return lkind if same else None


def _cond(ctx: Ctx, sides: _Sides, node: exp.Expression) -> Cond:
    while isinstance(node, exp.Paren):
        node = node.this
    side = sides.side(node)
    if side != "B":
        if sides.type_of(node).name != "BOOLEAN":
            raise ctx.err(f"join condition {node.sql()} is not a boolean", node)
        return Cond("COL", (sides.column("R" if side == "R" else "L", node),))
    if isinstance(node, (exp.And, exp.Or)):
        return Cond(node.key.upper(), (_cond(ctx, sides, node.this),
                                       _cond(ctx, sides, node.expression)))
    if isinstance(node, exp.Not):
        return Cond("NOT", (_cond(ctx, sides, node.this),))
    if isinstance(node, exp.Between):
        low = exp.GTE(this=node.this.copy(), expression=node.args["low"].copy())
        high = exp.LTE(this=node.this.copy(), expression=node.args["high"].copy())
        return Cond("AND", (_cond(ctx, sides, low), _cond(ctx, sides, high)))
    op = _CMP.get(type(node))
    if op is not None:
        a, b = node.this, node.expression
        sa, sb = sides.side(a), sides.side(b)
        if {sa, sb} in ({"L", "R"}, {"L", "C"}, {"R", "C"}):
            if sa == "R" or sb == "L":
                a, b, op = b, a, _FLIP[op]
            lcol, rcol = sides.pair(a, b)
            return Cond(op, (lcol, rcol))
        ta, tb = sides.type_of(a), sides.type_of(b)
        if not (ta.is_numeric and tb.is_numeric or _kind(ta) == _kind(tb)):
            raise ctx.err(f"join condition {node.sql()} compares {ta.sql()} with {tb.sql()}",
                          node)
        return Cond(op, (_operand(ctx, sides, a), _operand(ctx, sides, b)))
    raise ctx.err(f"join condition {node.sql()}: {node.key.upper()} combines columns of both "
                  "inputs; twinflow evaluates =, <>, <, <=, >, >=, <=>, BETWEEN, AND, OR, NOT "
                  f"over expressions of one input, or of both with {_CALC_OPS}", node)


_CALC = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.DPipe: "||", exp.Neg: "NEG"}
_CALC_OPS = "+, -, * (integers, DOUBLE), unary - and || (text, integers)"


def _kind(t) -> str:
    return "text" if t.name in ("STRING", "VARCHAR", "CHAR") else t.name


def _operand(ctx: Ctx, sides: _Sides, node: exp.Expression) -> str | Calc:
    """A comparison operand: the column holding an expression of one input, or a Calc
    combining both (evaluated per candidate pair, stream/calc.py)."""
    while isinstance(node, exp.Paren):
        node = node.this
    side = sides.side(node)
    if side != "B":
        return sides.column("R" if side == "R" else "L", node)
    op = _CALC.get(type(node))
    if op is None:
        raise ctx.err(f"join condition: {node.sql()} ({node.key.upper()}) combines columns of "
                      f"both inputs; twinflow computes {_CALC_OPS} over both inputs", node)
    t = sides.type_of(node)
    args = [node.this] if op == "NEG" else [node.this, node.expression]
    types = [sides.type_of(a) for a in args]
    ok = (t.is_integral or t.name == "DOUBLE") and all(
        x.is_integral or x.name == "DOUBLE" for x in types) if op != "||" \
        else all(_kind(x) == "text" or x.is_integral for x in types)
    if not ok:
        shown = f"{op} over {', '.join(x.sql() for x in types)}"
        raise ctx.err(f"join condition: {node.sql()} ({shown}) combines columns of both inputs; "
                      f"twinflow computes {_CALC_OPS} over both inputs", node)
    return Calc(op, tuple(_operand(ctx, sides, a) for a in args),
                "STRING" if op == "||" else t.name)
