"""Event-time temporal join: ``l [LEFT] JOIN versioned FOR SYSTEM_TIME AS OF l.t AS r ON l.k =
r.k`` (Flink's TemporalRowTimeJoinOperator), as a transformWithState processor over buckets of
the join keys.

Changelog rules (append-only: the left input inserts, every output row is ``+I``):
- Right rows are versions of their join key, by their rowtime; a later row with the same time
  replaces the earlier one. When the right side is a deduplication to the latest row per key
  (plan.Temporal.dedup), a row older than its key's latest version when it arrives is none.
- A left row waits until the watermark reaches its time, then joins the version of its key
  with the latest time at or before its own, once: INNER drops it when there is none or the
  residual condition is not TRUE for it (an older version is not tried), LEFT pads it with
  NULLs. A key with NULLs joins the versions of the same key, NULLs included (Flink keys the
  operator by the join key and does not test the equality again; a regular join does).
- Once the watermark has passed some versions of a key, all but the newest of them leave state
  (no waiting or later left row can pick them).
- A row of either side at or behind the watermark when it arrives is late: dropped and
  reported (``LATE`` with its table's tag, late.csv), and batch leaves it out (parity). Flink
  still joins a late left row against the versions its cleanup left, and stores a late
  version, answers that depend on when its timers fired.
- The watermark is both inputs' minimum; end of input moves it past every row: all fire.

Runtime: grouped by bucket (a hash of the join keys): one Python call per bucket and
micro-batch. State per bucket: one page (stream/state_view.py) with the waiting left rows and
the versions as numpy columns, and one event-time timer at the earliest waiting left time (or
the earliest time at which a version can leave). Firing is one as-of merge (``merge_asof`` by
key) of all due left rows against all versions of the bucket.
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
from operators_lib.stream.rows import joint_key_codes, key_codes
from operators_lib.stream.window_join import late_markers, pair_test, side_columns


@dataclass(frozen=True)
class TemporalJoinSpec:
    kind: str  # INNER | LEFT
    keys: tuple[str, ...]  # the union's join key columns
    left: tuple[str, ...]  # the union's columns of each side
    right: tuple[str, ...]
    dedup: bool  # versions of a latest-row deduplication (module docstring)
    late_tags: tuple[int, int]  # per side, the tw__ts of its LATE markers (plan.late_tag)
    integral: tuple[str, ...] = ()  # integer columns (pandas may hand them over as float64)
    residual: Cond | None = None  # over the union's columns

    @property
    def output(self) -> tuple[str, ...]:
        return self.left + self.right


class TemporalJoinProcessor(TimedState):
    """Input: the union of both sides' rows (``spec`` columns, the side, the row's time in
    ``tw__t``), grouped by bucket of the join keys."""

    name = "temporal"

    def __init__(self, spec: TemporalJoinSpec):
        self.spec = spec

    def handleInputRows(self, key, rows, timerValues) -> Iterator[pd.DataFrame]:
        wm = watermark(timerValues)
        page = self._load()
        df = one_frame(rows)
        df = df[markers(df[ROWNUM].to_numpy()).data]  # the end-of-input marker moves the
        # watermark only
        late = None
        if len(df):
            on_time = df[TIME_MS].to_numpy(dtype=np.int64) > wm
            gone = df[~on_time]
            if len(gone):
                late = late_markers(gone, self.spec.late_tags, self.spec.output)
            df = df[on_time]
            side = df[SIDE].to_numpy(dtype=np.int64)
            cols = (*self.spec.keys, *self.spec.left, TIME_MS, ROWNUM)
            probes = df[side == 0]
            if len(probes):
                page["left"] = concat(page.get("left"), {c: probes[c].to_numpy() for c in cols})
            self._add_versions(page, df[side == 1])
        fired = self._fire(page, wm)
        self._save(page, expired=None)
        yield from (o for o in (late, fired) if o is not None)

    # -- state ------------------------------------------------------------------------------
    def _load(self) -> dict:
        return self.state.load() or {}

    def _save(self, page: dict, expired: int | None) -> None:
        due = []
        if page.get("left") is not None:
            due.append(int(page["left"][TIME_MS].min()))
        versions = page.get("versions")
        if versions is not None:
            code, t = _codes(versions, self.spec.keys), versions[TIME_MS].astype(np.int64)
            superseded = code[1:] == code[:-1]  # sorted by (key, time): a newer one follows
            if superseded.any():
                due.append(int(t[1:][superseded].min()))
        page["timer"] = move_timer(self.handle, page.get("timer"), expired,
                                   min(due) if due else None)
        self.state.save(page if page.get("left") is not None or versions is not None else None)

    def _add_versions(self, page: dict, rows: pd.DataFrame) -> None:
        """On-time right rows into the page's versions, kept sorted by (key, time) with one
        version per key and time (the later arrival)."""
        if not len(rows):
            return
        cols = (*self.spec.keys, *self.spec.right, TIME_MS, ROWNUM)
        new = {c: rows[c].to_numpy() for c in cols}
        old = page.get("versions")
        both = concat(old, new)
        code = _codes(both, self.spec.keys)
        t = both[TIME_MS].astype(np.int64)
        n_old = 0 if old is None else len(old[TIME_MS])
        arrival = np.arange(len(t))  # stored versions first, then rows in arrival order
        arrival[n_old:] = n_old + np.argsort(np.argsort(new[ROWNUM].astype(np.int64)))
        keep = np.ones(len(t), bool)
        if self.spec.dedup:  # a row older than its key's latest so far is no version
            order = np.argsort(arrival)
            frame = pd.DataFrame({"c": code[order], "t": t[order]})
            latest = frame.groupby("c")["t"].cummax().groupby(frame["c"]).shift()
            keep[order] = ~(frame["t"] < latest).to_numpy()
        order = np.lexsort((arrival, t, code))
        order = order[keep[order]]
        last = np.ones(len(order), bool)  # the last arrival of each (key, time)
        last[:-1] = (code[order][1:] != code[order][:-1]) | (t[order][1:] != t[order][:-1])
        page["versions"] = take(both, order[last]) if len(order) else None

    def _fire(self, page: dict, wm: int) -> pd.DataFrame | None:
        """The left rows due at ``wm``, joined; then versions no row can pick leave."""
        left, versions = page.get("left"), page.get("versions")
        out = None
        if left is not None:
            due = left[TIME_MS].astype(np.int64) <= wm
            if due.any():
                page["left"] = take(left, ~due) if not due.all() else None
                out = self._join(take(left, due), versions)
        if versions is not None:
            code, t = _codes(versions, self.spec.keys), versions[TIME_MS].astype(np.int64)
            superseded = np.zeros(len(t), bool)  # a newer version at or behind the watermark
            superseded[:-1] = (code[1:] == code[:-1]) & (t[1:] <= wm)
            if superseded.any():
                page["versions"] = take(versions, ~superseded)
        return out

    def _join(self, probes: Block, versions: Block | None) -> pd.DataFrame | None:
        n = len(probes[TIME_MS])
        picked = np.full(n, -1, np.int64)
        if versions is not None:
            lc, vc, _, _ = joint_key_codes(probes, versions, self.spec.keys)
            lf = pd.DataFrame({"c": lc, "t": probes[TIME_MS].astype(np.int64),
                               "i": np.arange(n)}).sort_values("t", kind="stable")
            vf = pd.DataFrame({"c": vc, "t": versions[TIME_MS].astype(np.int64),
                               "j": np.arange(len(vc))}).sort_values("t", kind="stable")
            m = pd.merge_asof(lf, vf, on="t", by="c", direction="backward")
            hit = m["j"].notna().to_numpy()
            picked[m["i"].to_numpy()[hit]] = m["j"].to_numpy()[hit].astype(np.int64)
            keep_passing(self.spec, probes, versions, picked)
        rows = np.arange(n) if self.spec.kind == "LEFT" else np.flatnonzero(picked >= 0)
        if not len(rows):
            return None
        rows = rows[np.lexsort((probes[ROWNUM][rows].astype(np.int64),
                                probes[TIME_MS][rows].astype(np.int64)))]
        return pick_rows(self.spec, probes, rows, versions, picked[rows],
                         probes[TIME_MS][rows].astype(np.int64))


def keep_passing(spec: TemporalJoinSpec, probes: Block, versions: Block,
                 picked: np.ndarray) -> None:
    """Unpick (-1) the versions for which the residual condition is not TRUE."""
    passes = pair_test(spec, probes.__getitem__, versions.__getitem__)
    if passes is not None:
        li = np.flatnonzero(picked >= 0)
        picked[li[~passes(li, picked[li])]] = -1


def pick_rows(spec: TemporalJoinSpec, probes: Block, rows: np.ndarray, versions: Block | None,
              picked: np.ndarray, emitted: np.ndarray) -> pd.DataFrame:
    """Output rows: left rows ``rows`` with version ``picked`` (-1: NULLs), as ``+I``."""
    out: dict[str, object] = {**side_columns(probes, spec.left, rows, spec.integral),
                              **side_columns(versions, spec.right, picked, spec.integral)}
    out[OP] = np.full(len(rows), "+I", dtype=object)
    out[EMIT_TS] = np.asarray(emitted, dtype=np.int64)
    out[ROWNUM] = probes[ROWNUM][rows].astype(np.int64)
    return pd.DataFrame(out)


def _codes(block: Block, keys: tuple[str, ...]) -> np.ndarray:
    """A dense code per distinct key (NULLs included) of a page's rows."""
    return key_codes(pd.DataFrame({k: block[k] for k in keys}), list(keys))
