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
Everything else (ROWS frames, UNBOUNDED frames, SESSION windows, deduplication, a first run
without a watermark) reads all retained input.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from operators_lib.plan import Filter, Node, Over, Project, Scan, WindowAggregate


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
        earliest = [_bound(p, time_col, "min") for p in new_parts]
        cut = min([cut, *[e for e in earliest if e is not None]])
    return cut - reach


def parts_from(parts: list[Path], time_col: str, cut: int) -> list[Path]:
    """The parts holding an event time at or after ``cut``."""
    return [p for p in parts if (_bound(p, time_col, "max") or cut) >= cut]


def time_operator(plan: Node) -> Node:
    while isinstance(plan, (Filter, Project)):
        plan = plan.child
    return plan


def _bound(part: Path, time_col: str, which: str) -> int | None:
    """The earliest or latest event time (epoch ms) in a staged part, None if it has none: from
    the Parquet statistics of its row groups (ingest.stage writes microseconds), no row read."""
    meta = pq.ParquetFile(part).metadata
    index = meta.schema.to_arrow_schema().get_field_index(time_col)
    stats = [meta.row_group(g).column(index).statistics for g in range(meta.num_row_groups)]
    if any(s is None or (not s.has_min_max and s.null_count != meta.row_group(g).num_rows)
           for g, s in enumerate(stats)):
        raise RuntimeError(f"{part}: no statistics for {time_col}")  # a bug (ingest.stage)
    values = [(s.min_raw if which == "min" else s.max_raw) // 1000 for s in stats
              if s.has_min_max]
    return (min if which == "min" else max)(values) if values else None
