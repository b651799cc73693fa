"""Interval join: ``l JOIN r ON l.k = r.k AND l.t BETWEEN r.t + lower AND r.t + upper`` over
two rowtime attributes, ``INNER | LEFT | RIGHT | FULL`` (Flink's TimeIntervalJoin /
RowTimeIntervalJoin), as a transformWithState processor over buckets of the equality keys.

Changelog rules (append-only: every row is ``+I``, nothing is ever retracted):
- A pair matches when its keys are equal (NULL matches nothing), ``r.t + lower <= l.t <= r.t +
  upper`` (plan.Interval, in ms) and the residual condition is TRUE. Each matching pair is
  emitted once, in the micro-batch in which the later of its two rows arrives.
- A row is kept in state while a row of the other side may still arrive to match it: a left
  row while the watermark is below ``l.t - lower``, a right row while it is below ``r.t +
  upper`` (Flink's cache condition). It then leaves state; a row of an outer side that never
  matched is emitted then, padded with NULLs. So an outer row is emitted once, when no match
  can arrive any more, never emitted padded and retracted later as a regular join does.
  With ``lower > upper`` nothing matches and every outer row is padded at once.
- A row whose time is at or behind the watermark when it arrives is late: dropped and reported
  (``LATE`` with its table's tag, late.csv), and batch mode leaves it out (parity). Flink joins
  such a row against whatever its lazily cleaned state still holds, which depends on when its
  cleanup timers fired; twinflow gives no result it cannot reproduce in batch.
- The watermark is both inputs' minimum (Spark's global watermark). End of input moves it past
  every row: every outer row still waiting is padded.

Runtime: grouped by bucket (a hash of the equality keys): one Python call per bucket and
micro-batch. State per bucket: one page (stream/state_view.py) with each side's waiting rows as
numpy columns (keys, values, time, arrival, whether it matched) and one event-time timer at the
earliest time a row leaves. New rows are matched with one hash merge on the keys against the
other side's waiting and new rows, time bounds and residual evaluated over all candidate pairs
at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from operators_lib.plan import EMIT_TS, OP, ROWNUM, Cond
from operators_lib.stream.event_time import (
    TIME_MS,
    Block,
    TimedState,
    concat,
    move_timer,
    one_frame,
    take,
    watermark,
)
from operators_lib.stream.join import SIDE
from operators_lib.stream.protocol import markers
from operators_lib.stream.rows import joint_key_codes
from operators_lib.stream.window_join import late_markers, pair_test, side_columns

MATCHED = "tw__matched"


@dataclass(frozen=True)
class IntervalJoinSpec:
    kind: str  # INNER | LEFT | RIGHT | FULL
    keys: tuple[str, ...]  # the union's equality key columns
    left: tuple[str, ...]  # the union's columns of each side
    right: tuple[str, ...]
    lower_ms: int  # right.t + lower <= left.t <= right.t + upper
    upper_ms: int
    late_tags: tuple[int, int]  # per side, the tw__ts of its LATE markers (plan.late_tag)
    integral: tuple[str, ...] = ()  # integer columns (pandas may hand them over as float64)
    residual: Cond | None = None  # over the union's columns

    @property
    def output(self) -> tuple[str, ...]:
        return self.left + self.right


class IntervalJoinProcessor(TimedState):
    """Input: the union of both sides' rows (``spec`` columns, the side, the row's time in
    ``tw__t``), grouped by bucket of the equality keys."""

    name = "interval"

    def __init__(self, spec: IntervalJoinSpec):
        self.spec = spec
        self.sides = (spec.left, spec.right)
        self.outer = (spec.kind in ("LEFT", "FULL"), spec.kind in ("RIGHT", "FULL"))
        # How long after its time each side's row may still match: l.t - lower, r.t + upper.
        self.keep = (-spec.lower_ms, spec.upper_ms)

    def handleInputRows(self, key, rows, timerValues) -> Iterator[pd.DataFrame]:
        wm = watermark(timerValues)
        page = self._load()
        df = one_frame(rows)
        df = df[markers(df[ROWNUM].to_numpy()).data]  # the end-of-input marker moves the
        # watermark only
        out = []
        if len(df):
            on_time = df[TIME_MS].to_numpy(dtype=np.int64) > wm
            gone = df[~on_time]
            if len(gone):
                out.append(late_markers(gone, self.spec.late_tags, self.spec.output))
            out.append(self._match(page, df[on_time]))
        out.append(self._fire(page, wm))
        self._save(page, expired=None)
        yield from (o for o in out if o is not None and len(o))

    # -- state ------------------------------------------------------------------------------
    def _load(self) -> dict:
        return self.state.load() or {"rows": [None, None]}

    def _save(self, page: dict, expired: int | None) -> None:
        due = [int(block[TIME_MS].min()) + keep
               for block, keep in zip(page["rows"], self.keep) if block is not None]
        page["timer"] = move_timer(self.handle, page.get("timer"), expired,
                                   min(due) if due else None)
        self.state.save(page if due else None)

    # -- the rules (module docstring) -------------------------------------------------------
    def _match(self, page: dict, df: pd.DataFrame) -> pd.DataFrame | None:
        """New on-time rows into the page, and the pairs they complete."""
        rows, fresh = [], []
        for s in (0, 1):
            mine = df[df[SIDE].to_numpy(dtype=np.int64) == s]
            cols = (*self.spec.keys, *self.sides[s], TIME_MS, ROWNUM)
            new = {c: mine[c].to_numpy() for c in cols}
            new[MATCHED] = np.zeros(len(mine), bool)
            old = page["rows"][s]
            rows.append(concat(old, new) if len(mine) else old)
            fresh.append(np.arange(len(rows[s][TIME_MS]) if rows[s] is not None else 0)
                         >= (len(old[TIME_MS]) if old is not None else 0))
        page["rows"] = rows
        left, right = rows
        if left is None or right is None or not (fresh[0].any() or fresh[1].any()):
            return None
        li, ri = self._pairs(left, right, fresh)
        left[MATCHED][li] = True
        right[MATCHED][ri] = True
        if not len(li):
            return None
        newer = np.where(fresh[0][li], left[ROWNUM][li], right[ROWNUM][ri])
        return self._output(left, li, right, ri, np.zeros(len(li), np.int64), newer)

    def _pairs(self, left: Block, right: Block, fresh: list[np.ndarray]
               ) -> tuple[np.ndarray, np.ndarray]:
        """(left, right) index pairs that match, at least one of the two rows new."""
        lc, rc, lv, rv = joint_key_codes(left, right, self.spec.keys)
        lf = pd.DataFrame({"c": lc[lv], "i": np.flatnonzero(lv)})
        rf = pd.DataFrame({"c": rc[rv], "j": np.flatnonzero(rv)})
        m = lf.merge(rf, on="c", sort=False)
        li, ri = m["i"].to_numpy(dtype=np.int64), m["j"].to_numpy(dtype=np.int64)
        lt, rt = left[TIME_MS][li].astype(np.int64), right[TIME_MS][ri].astype(np.int64)
        ok = ((fresh[0][li] | fresh[1][ri]) & (lt >= rt + self.spec.lower_ms)
              & (lt <= rt + self.spec.upper_ms))
        li, ri = li[ok], ri[ok]
        passes = pair_test(self.spec, left.__getitem__, right.__getitem__)
        if passes is not None and len(li):
            ok = passes(li, ri)
            li, ri = li[ok], ri[ok]
        order = np.lexsort((ri, li))
        return li[order], ri[order]

    def _fire(self, page: dict, wm: int) -> pd.DataFrame | None:
        """Rows no later row can match leave the page; outer ones that never matched are
        emitted padded."""
        out = []
        empty = self.spec.lower_ms > self.spec.upper_ms
        for s in (0, 1):
            block = page["rows"][s]
            if block is None:
                continue
            due = block[TIME_MS].astype(np.int64) + self.keep[s]
            gone = (due <= wm) | empty
            page["rows"][s] = take(block, ~gone) if not gone.all() else None
            pad = np.flatnonzero(gone & ~block[MATCHED]) if self.outer[s] else []
            if len(pad):
                pad = pad[np.lexsort((block[ROWNUM][pad], due[pad]))]
                none = np.full(len(pad), -1)
                li, ri = (pad, none) if s == 0 else (none, pad)
                out.append(self._output(*((block, li, None, ri) if s == 0 else
                                          (None, li, block, ri)), due[pad],
                                        block[ROWNUM][pad]))
        if len(out) > 1:  # both sides padded (FULL): as objects, all-NULL columns included
            out = [o.astype(object) for o in out]
        return pd.concat(out, ignore_index=True) if out else None

    def _output(self, left: Block | None, li: np.ndarray, right: Block | None,
                ri: np.ndarray, emitted: np.ndarray, rownum: np.ndarray) -> pd.DataFrame:
        """Rows of pairs (``li[i]``, ``ri[i]``), -1 (or a missing side): NULLs."""
        out: dict[str, object] = {
            **side_columns(left, self.spec.left, li, self.spec.integral),
            **side_columns(right, self.spec.right, ri, self.spec.integral)}
        out[OP] = np.full(len(li), "+I", dtype=object)
        out[EMIT_TS] = np.asarray(emitted, dtype=np.int64)
        out[ROWNUM] = np.asarray(rownum, dtype=np.int64)
        return pd.DataFrame(out)
