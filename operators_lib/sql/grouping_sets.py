"""GROUP BY GROUPING SETS, ROLLUP and CUBE, with GROUPING() / GROUPING_ID(), in an unbounded
GROUP BY.

Flink plans grouping sets as an Expand (each input row once per set, the keys outside the set
NULL, plus the set's id) and one Aggregate keyed by all the keys and that id. twinflow plans
the same thing from its own operators: a UNION ALL of one Aggregate per set, each over the
input with hidden key columns ``tw__gk*``, one per grouping expression, NULL where the set
lacks it (``_branch``). Every branch groups by all the hidden keys, so the empty set is a keyed
group too: an empty input gives no row in either mode, as in Flink (a plain aggregate without
GROUP BY gives one in batch mode). In each branch GROUPING(x, ..) and GROUPING_ID(x, ..) are
BIGINT constants (a bit per argument, 1 where the set lacks it, first argument highest),
GROUP_ID() the BIGINT count of the set's earlier copies (0 unless it is listed again), and a
grouping expression outside an aggregate call reads its hidden key (NULL when rolled up; a NULL
key of the data stays a group of its own: GROUPING tells the two apart). Aggregates read the
original columns.

Changelog: each set's groups update independently (-U/+U, HAVING's +U without -U), exactly as
Flink's per-(keys, set id) groups: with one input row per micro-batch, each set's changelog is
Flink's row for row (tests/cases/group/rollup_changelog). Flink's Expand emits an input row's
sets in Calcite's order (``_calcite_order``: a set before its subsets, else by its lowest
grouping expressions, each numbered by its first appearance in GROUP BY); the UNION's inputs
come in that order, but a retraction (-U) keeps the arrival of the row it retracts, so within
one input row twinflow emits the sets' retractions first. A set listed twice is Flink's
separate branch after the others (only the finals are comparable then): Calcite makes a level
of sets of each copy number (GROUP_ID), and where a level has one set, Flink groups it by every
grouping expression (none NULL) while its GROUPING(..) is the set's.

GROUPING() and GROUP_ID() in a GROUP BY without sets are 0. Refused: grouping sets in a
window aggregate (a group window or a window TVF), GROUPING SETS of the empty set only (a plain
aggregate: write it without GROUP BY), GROUPING of an expression that is not grouped (Flink's
error) or inside an aggregate.
"""

from __future__ import annotations

from functools import cmp_to_key
from itertools import product, zip_longest

from sqlglot import exp

from operators_lib.plan import Field, Node, Project, Union, quote
from operators_lib.sql.aggregate import plan_aggregate
from operators_lib.sql.context import Col, Ctx, Scope, key
from operators_lib.sql.set_ops import aligned
from operators_lib.sql.windows import GROUP_WINDOWS, tvf_below

_SETS = (exp.GroupingSets, exp.Rollup, exp.Cube)
_FUNCTIONS = ("GROUPING", "GROUPING_ID", "GROUP_ID")


def _is_grouping_call(n: exp.Expression) -> bool:
    return isinstance(n, exp.Anonymous) and n.name.upper() in _FUNCTIONS


def has_grouping(group: exp.Group | None, items, having: exp.Having | None) -> bool:
    """Does the aggregation use grouping sets or GROUPING()?"""
    exprs = [e for _, e in items] + ([having] if having is not None else [])
    return (group is not None and any(isinstance(g, _SETS) for g in group.expressions)) or any(
        _is_grouping_call(n) for e in exprs for n in e.walk())


def plan_grouping_sets(ctx: Ctx, child: Node, scope: Scope, items, group: exp.Group | None,
                       having: exp.Having | None, project) -> Node:
    """The GROUP BY (module docstring); ``items``: the resolved SELECT list."""
    grouped = [g for g in group.expressions if not _is_window(g)] if group else []
    exprs: list[exp.Expression] = []  # resolved grouping expressions, by first appearance
    sets = [tuple(dict.fromkeys(ids)) for ids in _expand(ctx, scope, grouped, exprs)]
    keys = {key(e): i for i, e in enumerate(exprs)}
    cond = scope.resolve(ctx, having.this) if having is not None else None
    if not any(isinstance(g, _SETS) for g in grouped):  # a plain GROUP BY: GROUPING(..) is 0
        every = set(range(len(exprs)))
        return plan_aggregate(ctx, child, scope,
                              [(n, _in_set(ctx, e, keys, every, None)) for n, e in items],
                              group, None, project,
                              resolved_having=_in_set(ctx, cond, keys, every, None))
    if len(grouped) != len(group.expressions) or tvf_below(child) is not None:
        raise ctx.err("GROUPING SETS, ROLLUP and CUBE in a window aggregate are not "
                      "supported", group)
    if not any(sets):
        raise ctx.err("GROUPING SETS of the empty set only is an aggregate without GROUP BY: "
                      "write it so", group)
    names = [ctx.hidden("gk") for _ in exprs]
    sqls = [ctx.sql(e, child.fields) for e in exprs]
    types = ctx.types(child.fields, sqls, group) if exprs else []
    key_scope = scope + Scope(tuple(Col(None, n, n) for n in names))
    key_group = exp.Group(expressions=[exp.column(n, quoted=True) for n in names])
    branches = []
    order = _calcite_order(sets)
    for ids, copy in order:
        members = set(ids)
        # Flink plans the copies of a level with one set as a GROUP BY of every grouping
        # expression (none NULL), its GROUPING(..) still the set's (measured on Flink 2.3)
        alone = [c for _, c in order].count(copy) == 1
        keyed = set(range(len(exprs))) if alone else members
        values = [s if i in keyed else f"CAST(NULL AS {t.spark().simpleString()})"
                  for i, (s, t) in enumerate(zip(sqls, types))]
        pre = Project(child, tuple((f.name, quote(f.name)) for f in child.fields) + tuple(
            zip(names, values)), child.fields + tuple(Field(n, t) for n, t in zip(names, types)))
        branches.append(plan_aggregate(
            ctx, pre, key_scope,
            [(n, _in_set(ctx, e, keys, members, names, copy)) for n, e in items], key_group,
            None, project, resolved_having=_in_set(ctx, cond, keys, members, names, copy)))
    if len(branches) == 1:
        return branches[0]
    fields, projected = aligned(ctx, branches, group, "GROUPING SETS")
    return Union(tuple(projected), fields)


def _is_window(g: exp.Expression) -> bool:
    return isinstance(g, exp.Anonymous) and g.name.upper() in GROUP_WINDOWS


def _expand(ctx: Ctx, scope: Scope, grouped: list[exp.Expression], exprs: list
            ) -> list[list[int]]:
    """The grouping sets of a GROUP BY (each a list of indices into ``exprs``, which collects
    the resolved grouping expressions): the cross product of its elements' sets."""
    def index(e: exp.Expression) -> int:
        resolved = scope.resolve(ctx, e)
        for i, known in enumerate(exprs):
            if key(known) == key(resolved):
                return i
        exprs.append(resolved)
        return len(exprs) - 1

    def one(e: exp.Expression) -> list[int]:  # (a, b), (a) or a: one set
        while isinstance(e, exp.Paren):
            e = e.this
        return [index(x) for x in e.expressions] if isinstance(e, exp.Tuple) else [index(e)]

    def sets_of(g: exp.Expression) -> list[list[int]]:
        if isinstance(g, exp.GroupingSets):
            return [s for e in g.expressions for s in (
                sets_of(e) if isinstance(e, _SETS) else [one(e)])]
        if isinstance(g, exp.Rollup):
            parts = [one(e) for e in g.expressions]
            return [sum(parts[:n], []) for n in range(len(parts), -1, -1)]
        if isinstance(g, exp.Cube):  # (a, b), (a), (b), ()
            parts = [one(e) for e in g.expressions]
            return [sum(c, []) for c in product(*[(p, []) for p in parts])]
        return [one(g)]

    return [sum(c, []) for c in product(*[sets_of(g) for g in grouped])] or [[]]


def _calcite_order(sets: list[tuple[int, ...]]) -> list[tuple[tuple[int, ...], int]]:
    """The distinct sets in the order of Calcite's ImmutableBitSet.COMPARATOR (a set before
    its subsets, else by the lowest differing index, a set that runs out first first), then
    each repeated set again (Flink's separate branch for it); each with its GROUP_ID (the
    number of its copies before it)."""
    def cmp(x: frozenset, y: frozenset) -> int:
        if x == y:
            return 0
        if x > y or y > x:
            return -1 if x > y else 1
        for a, b in zip_longest(sorted(x), sorted(y), fillvalue=-1):
            if a != b:
                return -1 if a < b else 1
        return 0

    distinct = list(dict.fromkeys(frozenset(s) for s in sets))
    ordered = sorted(distinct, key=cmp_to_key(cmp))
    repeated = [frozenset(s) for s in sets]
    for s in distinct:
        repeated.remove(s)
    copies = [1 + repeated[:i].count(s) for i, s in enumerate(repeated)]
    return [(tuple(sorted(s)), copy)
            for s, copy in zip(ordered + repeated, [0] * len(ordered) + copies)]


def _in_set(ctx: Ctx, node: exp.Expression | None, keys: dict[str, int], members: set[int],
            names: list[str] | None, copy: int = 0) -> exp.Expression | None:
    """``node`` (resolved) as one set's branch computes it: GROUPING(..) its constant, GROUP_ID()
    ``copy``; with ``names``, a grouping expression outside aggregate calls its hidden key
    column."""
    if node is None:
        return None
    if _is_grouping_call(node):
        value = copy if node.name.upper() == "GROUP_ID" else 0
        for arg in node.expressions:
            i = keys.get(key(arg))
            if i is None:
                raise ctx.err(f"the argument {arg.sql()} of {node.name.upper()} must be a "
                              "grouped expression (an expression of the GROUP BY)", node)
            value = 2 * value + (0 if i in members else 1)
        return exp.Cast(this=exp.Literal.number(value), to=exp.DataType.build("BIGINT"))
    if names is not None and key(node) in keys:
        return exp.column(names[keys[key(node)]], quoted=True)
    if isinstance(node, exp.AggFunc):
        for inner in node.walk():
            if _is_grouping_call(inner):
                raise ctx.err(f"{inner.name.upper()} inside an aggregate is not allowed", inner)
        return node
    node = node.copy()
    for arg, value in list(node.args.items()):
        if isinstance(value, exp.Expression):
            node.set(arg, _in_set(ctx, value, keys, members, names, copy))
        elif isinstance(value, list):
            node.set(arg, [_in_set(ctx, v, keys, members, names, copy)
                           if isinstance(v, exp.Expression) else v for v in value])
    return node
