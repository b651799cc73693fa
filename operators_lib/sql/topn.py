"""TopN: ``SELECT .. FROM (SELECT .., ROW_NUMBER() | RANK() | DENSE_RANK() OVER (PARTITION BY ..
ORDER BY ..) AS rownum FROM t) WHERE rownum <= N`` into a ``Rank`` plan node, as Flink's
optimizer folds the ranking window and the filter on its result into one operator.

Three steps: ``plan_rank`` plans the inner SELECT (its Rank still unbounded), ``fold_rank_filter``
moves the enclosing WHERE's conditions on the rank (``<=``, ``<``, ``=``, ``>=``, ``>``,
``BETWEEN`` against integer literals) into the Rank, and ``mark_rank_outputs`` records, once the
whole query is planned, whether anything reads the rank number (Flink's changelog differs).
A ROW_NUMBER kept to rank 1 and ordered by one time attribute is Flink's Deduplicate.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from operators_lib.plan import (
    Aggregate,
    Correlate,
    Field,
    Filter,
    Join,
    Node,
    Over,
    Project,
    Rank,
    Scan,
    SessionRows,
    SortKey,
    Union,
    WindowAggregate,
    WindowRows,
    children,
    find,
    first_row_dedup,
    quote,
    scans,
)
from operators_lib.sql.context import Ctx, PreProjection, Scope
from operators_lib.sql.windows import processing_time_window, windowed_by
from operators_lib.types import FlinkType

RANKING = {"ROW_NUMBER", "RANK", "DENSE_RANK"}


def ranking_name(win: exp.Window) -> str | None:
    func = win.this
    name = func.name.upper() if isinstance(func, exp.Anonymous) else func.key.upper()
    name = {"ROWNUMBER": "ROW_NUMBER", "DENSERANK": "DENSE_RANK"}.get(name, name)
    return name if name in RANKING else None


def has_ranking(items) -> bool:
    return any(ranking_name(w) for _, e in items for w in e.find_all(exp.Window))


def plan_rank(ctx: Ctx, child: Node, items, scope: Scope, project) -> Node:
    """child -> Project(partition/order expressions) -> Rank (unbounded) -> Project(items)."""
    wins = [w for _, e in items for w in e.find_all(exp.Window)]
    ranking = [w for w in wins if ranking_name(w)]
    if len(wins) > 1:
        raise ctx.err("a ranking function (ROW_NUMBER, RANK, DENSE_RANK) must be the only OVER "
                      "call of its SELECT", wins[1] if ranking[0] is wins[0] else wins[0])
    win = ranking[0]
    func = ranking_name(win)
    if not any(e is win for _, e in items):
        raise ctx.err(f"{func}() OVER must be a column of its own (e.g. {func}() OVER (..) AS "
                      "rownum), not part of an expression", win)
    if win.args.get("spec"):
        raise ctx.err(f"{func}() OVER does not take a window frame", win)
    order = win.args.get("order")
    if not order or not order.expressions:
        raise ctx.err(f"{func}() OVER needs an ORDER BY", win)
    by_name = {f.name: f for f in child.fields}
    pre = PreProjection(ctx, child)
    partition = tuple(pre.column(p, "p") for p in win.args.get("partition_by") or [])
    keys = []
    for o in order.expressions:
        desc = bool(o.args.get("desc"))
        nulls_first = o.args.get("nulls_first")
        keys.append(SortKey(pre.column(o.this, "s"), desc,
                            (not desc) if nulls_first is None else bool(nulls_first)))
    time_kind = None
    if func == "ROW_NUMBER" and len(keys) == 1 and keys[0].col in by_name:
        time_kind = by_name[keys[0].col].time_attr
    rank_field = ctx.hidden("rank")
    found = scans(child)
    node = pre.node()
    windowed, bounds = windowed_by(node, partition)
    if windowed and processing_time_window(node):
        raise ctx.err("window TopN over a processing-time window is not supported yet", win)
    if windowed == "aggregate" and time_kind:
        raise ctx.err("window deduplication over a window aggregate (ROW_NUMBER ordered by a "
                      "time attribute) is not supported yet", win)
    rank = Rank(node, func, partition, tuple(keys), 1, None, rank_field, True,
                tuple(pre.fields) + (Field(rank_field, FlinkType("BIGINT")),),
                time_kind=time_kind, source=found[0].table if len(found) == 1 else None,
                windowed=windowed, window_bounds=bounds)
    replaced = [(n, exp.column(rank_field, quoted=True) if e is win else e) for n, e in items]
    return project(ctx, rank, replaced)


def _rank_column(node: Node, name: str) -> bool:
    """Is column ``name`` of ``node`` an unbounded Rank's number, copied up unchanged?"""
    while isinstance(node, (Project, Filter)):
        if isinstance(node, Project):
            source = dict(node.exprs).get(name)
            if source is None or not source.startswith("`") or not source.endswith("`"):
                return False
            name = source[1:-1].replace("``", "`")
        node = node.child
    return isinstance(node, Rank) and node.end is None and node.rank_field == name


def _bound(cond: exp.Expression, node: Node) -> tuple[int | None, int | None] | None:
    """(lowest, highest) rank a condition allows, if it bounds a rank column by literals."""
    def lit(e) -> int | None:
        if isinstance(e, exp.Literal) and not e.is_string and e.name.lstrip("-").isdigit():
            return int(e.name)
        return None

    def is_rank(e) -> bool:
        return isinstance(e, exp.Column) and _rank_column(node, e.name)

    if isinstance(cond, exp.Between) and is_rank(cond.this):
        lo, hi = lit(cond.args.get("low")), lit(cond.args.get("high"))
        return (lo, hi) if lo is not None and hi is not None else None
    if not isinstance(cond, (exp.LTE, exp.LT, exp.EQ, exp.GTE, exp.GT)):
        return None
    a, b = cond.this, cond.expression
    flip = {exp.LTE: exp.GTE, exp.LT: exp.GT, exp.GTE: exp.LTE, exp.GT: exp.LT, exp.EQ: exp.EQ}
    kind = type(cond)
    if is_rank(b) and lit(a) is not None:
        a, b, kind = b, a, flip[kind]
    if not is_rank(a) or lit(b) is None:
        return None
    n = lit(b)
    return {exp.LTE: (None, n), exp.LT: (None, n - 1), exp.EQ: (n, n), exp.GTE: (n, None),
            exp.GT: (n + 1, None)}[kind]


def fold_rank_filter(ctx: Ctx, child: Node, scope: Scope, conjuncts: list, where
                     ) -> tuple[Node, list]:
    """Move the WHERE conditions on a ranking column of ``child`` into its Rank."""
    if not _has_unbounded_rank(child):
        return child, conjuncts
    lo, hi, rest = 1, None, []
    for cond in conjuncts:
        bound = _bound(scope.resolve(ctx, cond), child)
        if bound is None:
            rest.append(cond)
            continue
        lo = max(lo, bound[0]) if bound[0] is not None else lo
        hi = min(hi, bound[1]) if bound[1] is not None and hi is not None else (
            bound[1] if bound[1] is not None else hi)
    if hi is None:
        raise ctx.err("a ranking function needs an upper bound on its result in the enclosing "
                      "WHERE (e.g. WHERE rownum <= 10), as Flink's TopN does", where)
    if lo > hi:
        raise ctx.err(f"the rank filter keeps no rank ({lo} to {hi})", where)
    bounded = _bounded(child, lo, hi)
    for rank in find(bounded, Rank):
        if first_row_dedup(rank):
            ctx.refuse_held_time(rank.child, "deduplication keeping the first row by "
                                      "event time", where)
    return bounded, rest


def _has_unbounded_rank(node: Node) -> bool:
    while isinstance(node, (Project, Filter)):
        node = node.child
    return isinstance(node, Rank) and node.end is None


def _bounded(node: Node, lo: int, hi: int) -> Node:
    if isinstance(node, (Project, Filter)):
        return replace(node, child=_bounded(node.child, lo, hi))
    dedup = None
    if node.time_kind and lo == hi == 1:  # Flink's Deduplicate: first / last row per key by time
        dedup = "last" if node.order_by[0].desc else "first"
    return replace(node, start=lo, end=hi, dedup=dedup)


def unbounded_rank(node: Node) -> bool:
    return any(isinstance(n, Rank) and n.end is None for n in _walk(node))


def _walk(node: Node):
    yield node
    for c in children(node):
        yield from _walk(c)


def _refs(sql: str, fields) -> set[str]:
    return {f.name for f in fields if quote(f.name) in sql}


def _ranked(node: Node) -> Node:
    """Mark the GROUP BY whose rows a TopN ranks (through projections and filters)."""
    if isinstance(node, (Project, Filter)):
        return replace(node, child=_ranked(node.child))
    return replace(node, ranked=True) if isinstance(node, Aggregate) else node


def mark_rank_outputs(node: Node, need: set[str] | None = None) -> Node:
    """Set each Rank's ``rank_output``: does anything above read its number? (``need``: the
    columns of ``node`` read above; None: all, as for the query's result.) Also marks the
    GROUP BY a TopN ranks (``Aggregate.ranked``)."""
    def all_of(n: Node) -> set[str]:
        return {f.name for f in n.fields}

    need = all_of(node) if need is None else need
    if isinstance(node, Scan):
        return node
    if isinstance(node, Project):
        sqls = [s for n, s in node.exprs if n in need]
        return replace(node, child=mark_rank_outputs(
            node.child, set().union(*[_refs(s, node.child.fields) for s in sqls])))
    if isinstance(node, Filter):
        return replace(node, child=mark_rank_outputs(
            node.child, need | _refs(node.condition, node.child.fields)))
    if isinstance(node, Rank):
        child_need = (need - {node.rank_field}) | set(node.partition_by) | {
            k.col for k in node.order_by}
        return replace(node, child=_ranked(mark_rank_outputs(node.child, child_need)),
                       rank_output=node.rank_field in need)
    if isinstance(node, Aggregate):
        child = mark_rank_outputs(node.child, set(node.group_by) | {a.arg for a in node.aggs
                                                                    if a.arg})
        # FIRST_VALUE, LAST_VALUE, LISTAGG and M2 read their input in arrival order, as a TopN
        # ranks ties by it: a GROUP BY below must tell each row's exact arrival.
        if any(a.func in ("FIRST_VALUE", "LAST_VALUE", "LISTAGG", "M2") for a in node.aggs):
            child = _ranked(child)
        return replace(node, child=child)
    if isinstance(node, Join):
        return replace(node, left=mark_rank_outputs(node.left, None),
                       right=mark_rank_outputs(node.right, None))
    if isinstance(node, (Over, WindowAggregate, WindowRows, SessionRows, Correlate)):
        return replace(node, child=mark_rank_outputs(node.child, None))
    if isinstance(node, Union):
        return replace(node, inputs=tuple(mark_rank_outputs(i, None) for i in node.inputs))
    raise TypeError(f"unknown plan node {type(node).__name__}")
