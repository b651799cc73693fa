"""Which staged input a scheduled run's parity must read: what the run's results can reach.

A query with one event-time operator whose results reach back a bounded time needs batch over
the recent input only (rows at or after a cut), not over all history:

- OVER ``RANGE BETWEEN INTERVAL r PRECEDING``: a row's result reads its partition's rows within
  r before it. The run emits rows that were pending (event time past the previous run's
  watermark W) or arrived in it (a bounded frame emits a row behind W whose partition has not
  fired past it), so every emitted row's frame lies at or after
  cut = min(W, the run's earliest new event time) - r.
- TUMBLE, HOP, CUMULATE windows of size s: the run emits the windows whose end - 1 passes W
  (and not the next watermark), and the windows still pending end later: all start after
  W - s, so every row they hold is at or after cut = W - s.

Staged files (micro-batch parts) whose latest event time is before the cut are left out; the
rest may hold earlier rows too, which only form windows (or frames) the run does not compare.

A query whose one stateful operator is keyed by input columns the result shows (``key_scope``:
OVER PARTITION BY, GROUP BY, TopN and deduplication PARTITION BY, an INNER / LEFT / SEMI / ANTI
equi-join of two tables) needs batch over the rows of the keys the run touched only: a key's
results depend on its own rows. The touched keys are those of the rows the run emitted (OVER,
keep-first deduplication: a row emitted now may have arrived before) or of the run's new input
(updating results: a key without new rows keeps its result). The batch reads every staged
file and keeps those keys' rows (a semi-join on the executors): it computes the operator over
the touched keys' history only. Everything else (SESSION windows, cascades, joins of joins, a
first run without a previous one) compares all retained input; the audit DAG compares all of
it for every query.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from sqlglot import exp, parse_one

from operators_lib.io.ingest import event_time_bound
from operators_lib.plan import (
    Aggregate,
    Filter,
    Join,
    Node,
    Over,
    Project,
    Rank,
    Scan,
    WindowAggregate,
)


def reach_ms(plan: Node) -> int | None:
    """How far back in event time a result of the query's one time operator reaches (above),
    or None when it is not bounded so (or the query has other stateful operators)."""
    node = plan
    while isinstance(node, (Filter, Project)):
        node = node.child
    below = node.child if isinstance(node, (Over, WindowAggregate)) else None
    while isinstance(below, (Filter, Project)):
        below = below.child
    if not isinstance(below, Scan):
        return None
    if isinstance(node, Over):
        frame = node.frame
        bounded = frame.kind == "RANGE" and frame.preceding is not None and not frame.numeric
        return frame.preceding if bounded and node.time_kind == "rowtime" else None
    if node.time_kind == "rowtime" and node.source is not None and node.hold_ms == 0 and \
            node.window.kind in ("TUMBLE", "HOP", "CUMULATE"):
        return node.window.size_ms
    return None


def cut_ms(plan: Node, watermark_before: str | None, new_parts: list[Path], time_col: str
           ) -> int | None:
    """The earliest event time (epoch ms) the run's parity needs; None: all input."""
    reach = reach_ms(plan)
    if reach is None or watermark_before is None:
        return None
    cut = pd.Timestamp(watermark_before).value // 1_000_000
    if isinstance(time_operator(plan), Over):
        earliest = [event_time_bound(p, time_col, "min") for p in new_parts]
        cut = min([cut, *[e for e in earliest if e is not None]])
    return cut - reach


def parts_from(parts: list[Path], time_col: str, cut: int) -> list[Path]:
    """The parts holding an event time at or after ``cut``."""
    return [p for p in parts if (event_time_bound(p, time_col, "max") or cut) >= cut]


def time_operator(plan: Node) -> Node:
    while isinstance(plan, (Filter, Project)):
        plan = plan.child
    return plan


@dataclass(frozen=True)
class KeyScope:
    """The key of a query's one stateful operator: its input columns per table (lower-case
    name) and the result columns that show it, in the same order."""

    inputs: dict[str, tuple[str, ...]]
    output: tuple[str, ...]


def key_scope(plan: Node) -> KeyScope | None:
    """The query's key scope (module docstring), or None where results are not keyed so."""
    above, node = [], plan
    while isinstance(node, (Filter, Project)):
        above.append(node)
        node = node.child
    if isinstance(node, Over) or (isinstance(node, Rank) and node.windowed is None):
        sides = [(node.child, node.partition_by)]
    elif isinstance(node, Aggregate):
        sides = [(node.child, node.group_by)]
    elif isinstance(node, Join) and node.kind in ("INNER", "LEFT", "SEMI", "ANTI") and \
            node.left_keys and node.windowed is None and node.interval is None and \
            node.temporal is None and \
            [f.name for f in node.fields[:len(node.left.fields)]] == \
            [f.name for f in node.left.fields]:
        sides = [(node.left, node.left_keys), (node.right, node.right_keys)]
    else:
        return None
    inputs = {}
    for child, keys in sides:
        found = _scan_columns(child, keys)
        if not keys or found is None or found[0] in inputs:  # a self-join: two keys, one table
            return None
        inputs[found[0]] = found[1]
    output = tuple(sides[0][1])
    if any(k.lower() not in {f.name.lower() for f in node.fields} for k in output):
        return None
    for project in reversed(above):  # the key's names in the result
        if isinstance(project, Project):
            shown = {}
            for name, sql in project.exprs:
                shown.setdefault(_column(sql), name)
            output = tuple(shown.get(c.lower()) for c in output)
            if None in output:
                return None
    return KeyScope(inputs, output)


def _scan_columns(node: Node, cols: tuple[str, ...]) -> tuple[str, tuple[str, ...]] | None:
    """(table, its physical columns) that ``cols`` of ``node`` are, unchanged, through Filters
    and Projects; None if they are computed."""
    while not isinstance(node, Scan):
        if isinstance(node, Project):
            given = {name.lower(): _column(sql) for name, sql in node.exprs}
            cols = tuple(given.get(c.lower()) for c in cols)
            if None in cols:
                return None
        elif not isinstance(node, Filter):
            return None
        node = node.child
    physical = {c.name.lower(): c.name for c in node.table.physical}
    if any(c.lower() not in physical for c in cols):
        return None
    return node.table.name.lower(), tuple(physical[c.lower()] for c in cols)


def _column(sql: str) -> str | None:
    """The lower-case column a Spark SQL expression is, if it is a plain column."""
    tree = parse_one(sql, read="spark")
    return tree.name.lower() if isinstance(tree, exp.Column) else None
