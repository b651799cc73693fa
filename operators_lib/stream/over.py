"""Event-time OVER aggregation as a transformWithState processor (one instance per partition key).

Implements, per PARTITION BY key::

    SELECT ..., agg(x) OVER (PARTITION BY k ORDER BY rowtime
                             ROWS|RANGE BETWEEN (UNBOUNDED | n | INTERVAL) PRECEDING
                             AND CURRENT ROW)

Changelog rules (Flink's RowTime*PrecedingFunction family):
- The output is append-only: every on-time input row is emitted once as ``+I``, with its
  aggregates, when the watermark passes its time; rows of one key leave in time order, rows with
  equal time in arrival order.
- A row is late, and dropped (emitted as ``LATE`` for the late-row report), when
  * UNBOUNDED frames: its time <= the current watermark;
  * bounded frames: its time <= the last time at which this key fired (so a row behind the
    watermark is still accepted by a key that has not fired past it).
- An accepted row waits for the watermark to advance after its arrival (Flink fires timers on a
  watermark *advance*), i.e. it fires once ``watermark >= max(time, watermark_at_arrival + 1)``.
- ROWS: peers are distinct windows; RANGE: rows with equal time share one window.
- ORDER BY a processing-time attribute: every row is emitted on arrival (no watermark, no late
  rows); its time is the micro-batch's processing time, so a RANGE frame treats the rows of one
  micro-batch as peers.

State (one value per key, read and written once per key per micro-batch): the rows waiting for
the watermark, the rows a bounded frame still needs (last n rows / rows within the interval of
the last fired time), the running accumulators of an unbounded frame, the last fired time and
the registered timer. One event-time timer per key, at the earliest pending fire time.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from pyspark.sql.streaming import StatefulProcessorHandle

from operators_lib.plan import EMIT_TS, OP, ROWNUM, AggCall, Frame
from operators_lib.stream.event_time import (
    NO_WATERMARK,
    STATE_SCHEMA,
    TIME_MS,
    Block,
    TimedState,
    concat,
    move_timer,
    one_frame,
    take,
    watermark,
)
from operators_lib.stream.window_aggs import Acc, as_array, running, windowed

_FIRE = "tw__fire"


@dataclass(frozen=True)
class OverSpec:
    frame: Frame
    time_col: str
    aggs: tuple[AggCall, ...]
    passthrough: tuple[str, ...]  # input columns copied to the output
    out_types: tuple[str, ...]  # pandas dtype per aggregate output ("Int64", "float64", "object")
    proctime: bool = False  # ORDER BY a processing-time attribute


@dataclass
class _KeyState:
    last_fired: int | None = None
    timer: int | None = None
    pending: Block | None = None  # rows waiting for the watermark (+ their fire time)
    history: Block | None = None  # bounded frames: time + aggregate arguments
    accs: list[Acc] = field(default_factory=list)  # unbounded frames


def _length(block: Block | None) -> int:
    return 0 if block is None else len(block[ROWNUM])


class OverProcessor(TimedState):
    def __init__(self, spec: OverSpec):
        self.spec = spec
        self.args = sorted({a.arg for a in spec.aggs if a.arg})
        self.columns = (*spec.passthrough, *self.args, ROWNUM, TIME_MS)

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle
        self.state = handle.getValueState("over", STATE_SCHEMA)

    # -- callbacks -------------------------------------------------------------------------
    def handleInputRows(self, key, rows, timerValues) -> Iterator[pd.DataFrame]:
        wm = watermark(timerValues)
        st = self._load()
        out = [self._fire(st, wm)]
        df = one_frame(rows)
        new = {c: df[c].to_numpy() for c in self.columns}
        new = take(new, new[ROWNUM] >= 0)  # drop the end-of-input marker
        if self.spec.proctime:
            # Processing time: a row is complete on arrival (its time is the micro-batch's).
            if _length(new):
                due = take(new, np.argsort(new[ROWNUM], kind="stable"))
                out.append(self._emit(due, self._aggregate(st, due), "+I"))
        elif _length(new):
            ts = new[TIME_MS]
            if self.spec.frame.preceding is None:
                late = ts <= wm
            else:
                late = ts <= (st.last_fired if st.last_fired is not None else NO_WATERMARK)
            if late.any():
                out.append(self._emit(take(new, late), None, "LATE"))
                new = take(new, ~late)
            new[_FIRE] = np.maximum(new[TIME_MS], wm + 1)
            if _length(new):
                st.pending = concat(st.pending, new)
        self._save(st, expired=None)
        yield from (o for o in out if o is not None)

    # -- state -----------------------------------------------------------------------------
    def _load(self) -> _KeyState:
        value = self.state.get()
        if value is None:
            return _KeyState(accs=[Acc() for _ in self.spec.aggs])
        return pickle.loads(value[0])

    def _save(self, st: _KeyState, expired: int | None) -> None:
        due = int(st.pending[_FIRE].min()) if _length(st.pending) else None
        st.timer = move_timer(self.handle, st.timer, expired, due)
        self.state.update((pickle.dumps(st, protocol=5),))

    # -- firing ----------------------------------------------------------------------------
    def _fire(self, st: _KeyState, wm: int) -> pd.DataFrame | None:
        if not _length(st.pending):
            return None
        due_mask = st.pending[_FIRE] <= wm
        if not due_mask.any():
            return None
        due = take(st.pending, due_mask)
        due = take(due, np.lexsort((due[ROWNUM], due[TIME_MS])))
        st.pending = take(st.pending, ~due_mask) if not due_mask.all() else None
        results = self._aggregate(st, due)
        st.last_fired = int(due[TIME_MS][-1])
        return self._emit(due, results, "+I")

    def _aggregate(self, st: _KeyState, due: Block) -> list[list]:
        frame = self.spec.frame
        ts = due[TIME_MS]
        n = len(ts)
        if frame.preceding is None:
            results = []
            for call, acc in zip(self.spec.aggs, st.accs):
                arr, valid = as_array(due[call.arg], call) if call.arg else (
                    np.zeros(n), np.ones(n, bool))
                results.append(running(call, acc, arr, valid))
            if frame.kind == "RANGE":  # peers share the value of the last row of their time
                last = np.searchsorted(ts, ts, side="right") - 1
                results = [[r[i] for i in last] for r in results]
            return results
        hist = concat(st.history, {c: due[c] for c in (TIME_MS, *self.args)})
        all_ts = hist[TIME_MS]
        idx = np.arange(len(all_ts) - n, len(all_ts))
        if frame.kind == "ROWS":
            starts, ends = np.maximum(idx - frame.preceding, 0), idx
            keep = slice(max(len(all_ts) - frame.preceding, 0), None) if frame.preceding else \
                slice(0, 0)
            st.history = take(hist, keep)
        else:
            starts = np.searchsorted(all_ts, ts - frame.preceding, side="left")
            ends = np.searchsorted(all_ts, ts, side="right") - 1
            st.history = take(hist, all_ts >= ts[-1] - frame.preceding)
        results = []
        for call in self.spec.aggs:
            arr, valid = as_array(hist[call.arg], call) if call.arg else (
                np.zeros(len(all_ts)), np.ones(len(all_ts), bool))
            results.append(windowed(call, arr, valid, starts, ends))
        return results

    def _emit(self, rows: Block, results: list[list] | None, op: str) -> pd.DataFrame:
        n = _length(rows)
        out = {c: rows[c] for c in self.spec.passthrough}
        for i, (call, dtype) in enumerate(zip(self.spec.aggs, self.spec.out_types)):
            values = results[i] if results is not None else [None] * n
            out[call.name] = pd.array(values, dtype=dtype) if dtype != "object" else values
        out[OP] = np.full(n, op, dtype=object)
        out[EMIT_TS] = rows[TIME_MS]
        out[ROWNUM] = rows[ROWNUM]
        return pd.DataFrame(out)
