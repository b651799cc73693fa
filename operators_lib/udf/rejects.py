"""Reject mode for Python UDFs (``SET 'twinflow.python-udf.errors' = 'reject'``): an input row
on which a Python function fails (it raises, or returns what its declared type cannot hold) is
set aside with the reason, and the run goes on.

Flink has no such mode: an exception fails its job (twinflow's default, ``'fail'``: exit 2
naming the function). In reject mode the result is Flink's over the input without the rejected
rows, in both modes, and ``rejected.csv`` lists each of them with the function's error. How:
below each step that calls Python functions, a filter keeps the rows on which every call
succeeds (each call is tried on the row first, ``udf/calls.TryCall``; a deterministic function
fails again on the same row, so the step itself never fails); the run lists the rows those
filters drop by a batch job over the same steps (``rejected_rows``). A function is then called
twice on each row.

Reject mode is refused (exit 2) where a failing row is not one input row: a call after a join,
an aggregate, a window or any other stateful step, on a table the query reads twice, and a
call inside another call's arguments.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from operators_lib.plan import (
    ROWNUM,
    Filter,
    Join,
    Node,
    Project,
    Scan,
    Union,
    children,
    find,
)
from operators_lib.udf.calls import PREFIX, TRY_PREFIX

REASON = "tw__reason"


@dataclass(frozen=True)
class Guard:
    """A filter that rejects rows: the steps below it and why a row fails (Spark SQL, NULL
    where it does not)."""

    table: str  # the input table's name, as declared
    below: Node
    reason: str


def calls(sql: str) -> list[str]:
    """The Python calls in ``sql`` (``tw_udf_f(...)``, calls.PREFIX), whole: their parentheses
    balanced outside quoted literals."""
    found, i = [], sql.find(PREFIX)
    while i >= 0:
        if i == 0 or not (sql[i - 1].isalnum() or sql[i - 1] == "_"):
            depth, j, quote = 0, sql.index("(", i), None
            while True:
                ch = sql[j]
                if quote:
                    if ch == "\\":
                        j += 1
                    elif ch == quote:
                        quote = None
                elif ch in "'\"`":
                    quote = ch
                elif ch == "(":
                    depth += 1
                elif ch == ")":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            found.append(sql[i:j + 1])
            i = sql.find(PREFIX, j)
        else:
            i = sql.find(PREFIX, i + 1)
    return found


def guard(plan: Node, refuse: Callable[[str], Exception]) -> Node:
    """``plan`` with a rejecting filter below each step that calls Python functions (module
    docstring); ``refuse(reason)``: the error where reject mode cannot apply."""
    reads = Counter(s.table.name.lower() for s in find(plan, Scan))

    def visit(node: Node) -> Node:
        node = _with_children(node, [visit(c) for c in children(node)])
        if isinstance(node, Project):
            texts = [sql for _, sql in node.exprs]
        elif isinstance(node, Filter):
            texts = [node.condition]
        else:
            texts = []
            if PREFIX in repr([getattr(node, f.name) for f in dataclasses.fields(node)
                               if f.name not in ("child", "left", "right", "inputs")]):
                raise refuse(f"a Python function in a {type(node).__name__} step: its rows are "
                             "not the input's")
        found = [c for t in texts for c in calls(t)]
        if not found:
            return node
        table = _input_table(node.child)
        if table is None:
            raise refuse("a Python function called after a join, an aggregate, a window or "
                         "another stateful step: a row it fails on is not one input row")
        if reads[table.name.lower()] > 1:
            raise refuse(f"the query reads table {table.name} more than once: a row rejected "
                         "in one place would be kept in the other")
        for call in found:
            if PREFIX in call[len(PREFIX):]:
                raise refuse(f"a Python function's call in another's arguments ({call})")
        tries = [TRY_PREFIX + c[len(PREFIX):] for c in found]
        reason = tries[0] if len(tries) == 1 else f"coalesce({', '.join(tries)})"
        return replace(node, child=Filter(node.child, f"{reason} IS NULL", node.child.fields))

    return visit(plan)


def guards(plan: Node) -> list[Guard]:
    """The rejecting filters of a plan ``guard`` made."""
    out = []
    for node in find(plan, Filter):
        if node.condition.startswith(TRY_PREFIX) or node.condition.startswith(
                f"coalesce({TRY_PREFIX}"):
            out.append(Guard(_input_table(node.child).name, node.child,
                             node.condition.removesuffix(" IS NULL")))
    return out


def rejected_rows(plan: Node, build: Callable[[Node], DataFrame]) -> DataFrame | None:
    """The rows the plan's rejecting filters drop: table name, ``ROWNUM`` (the row's place in
    its table's valid input) and the reason, from the steps below each filter built by
    ``build`` (the batch planner, over the run's staged input); None without reject mode."""
    found = None
    for g in guards(plan):
        rows = build(Filter(g.below, f"{g.reason} IS NOT NULL", g.below.fields)).select(
            F.lit(g.table).alias("table"), F.col(ROWNUM), F.expr(g.reason).alias(REASON))
        found = rows if found is None else found.unionByName(rows)
    return found


def _input_table(node: Node):
    """The table whose rows ``node`` holds one for one (only filters and projections above its
    scan), or None."""
    while isinstance(node, (Filter, Project)):
        node = node.child
    return node.table if isinstance(node, Scan) else None


def _with_children(node: Node, kids: list[Node]) -> Node:
    if isinstance(node, Scan):
        return node
    if isinstance(node, Join):
        return replace(node, left=kids[0], right=kids[1])
    if isinstance(node, Union):
        return replace(node, inputs=tuple(kids))
    return replace(node, child=kids[0])
