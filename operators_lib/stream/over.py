"""Event-time OVER aggregation as a transformWithState processor over buckets of partition keys,
vectorized across keys.

Implements, per PARTITION BY key::

    SELECT ..., agg(x) OVER (PARTITION BY k ORDER BY rowtime
                             ROWS|RANGE BETWEEN (UNBOUNDED | n | INTERVAL) PRECEDING
                             AND CURRENT ROW)

``agg`` is COUNT, SUM, AVG, MIN or MAX: STDDEV_* / VAR_* over a window reach this operator as
SUM(CAST(x * x AS T)), SUM(x) and COUNT(x) with the final expression in a projection, as Flink
expands them (sql/over.py, variance_over); FIRST_VALUE and LAST_VALUE take the frame's first
and last non-NULL value (in time, then arrival order); LISTAGG is refused.

Changelog rules (Flink's RowTime*PrecedingFunction family):
- The output is append-only: every on-time input row is emitted once as ``+I``, with its
  aggregates, when the watermark passes its time; rows of one key leave in time order, rows with
  equal time in arrival order.
- A row is late, and dropped (emitted as ``LATE`` for the late-row report), when
  * UNBOUNDED frames: its time <= the current watermark;
  * bounded frames: its time <= the last time at which its key fired (so a row behind the
    watermark is still accepted by a key that has not fired past it).
- An accepted row waits for the watermark to advance after its arrival (Flink fires timers on a
  watermark *advance*), i.e. it fires once ``watermark >= max(time, watermark_at_arrival + 1)``.
- At the end of input every waiting row fires (Flink's final watermark). Where the last staged
  part announces the end (plan.END_FIRST), in the micro-batch that reads it, after the rows it
  fired at its watermark: those due at the watermark the input ends with have times behind the
  others', so time order is the order of Flink's last watermark, then its final one.
- ROWS: peers are distinct windows; RANGE: rows with equal time share one window.
- ORDER BY a processing-time attribute: every row is emitted on arrival (no watermark, no late
  rows); its time is the micro-batch's processing time, so a RANGE frame treats the rows of one
  micro-batch as peers.

Runtime: grouped by bucket (a hash of the partition key, stream/keying.py), so a micro-batch
costs one Python call per bucket with rows or a due timer, never one per key; rows come in and
go out as Arrow (stream/packing.py: ``arrow``), the passed-through columns never converted.
State per bucket: one page (stream/state_view.py: Arrow tables and numpy columns) holding its
keys (the key columns, each key's last fired time and, for UNBOUNDED frames,
its running accumulators), the rows waiting for the watermark with their fire time and key
code, and for bounded frames the rows each key's frame still needs (its last n rows / its rows
within the interval of its last fired time); one event-time timer at the earliest pending fire
time. A firing sorts the due rows of all the bucket's keys by (key, time, arrival) behind each
key's kept rows and computes every frame at once (window_aggs: index ranges floored at the
key's first row; running aggregates per key).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from operators_lib.plan import EMIT_TS, END_MS, LATE, ROWNUM, AggCall, Frame
from operators_lib.stream import packing
from operators_lib.stream.event_time import (
    NO_WATERMARK,
    PAST_EVERYTHING,
    TIME_MS,
    TimedState,
    move_timer,
    watermark,
)
from operators_lib.stream.protocol import markers
from operators_lib.stream.rows import page_key_codes
from operators_lib.stream.window_aggs import as_array, empty_acc, running, windowed

_FIRE, _CODE = "tw__fire", "tw__code"


@dataclass(frozen=True)
class OverSpec:
    frame: Frame
    aggs: tuple[AggCall, ...]
    passthrough: tuple[str, ...]  # input columns copied to the output
    out_types: tuple[str, ...]  # kernel result dtype per aggregate ("Int64", "float64", "object")
    keys: tuple[str, ...]  # the partition key's columns (keying.grouping_keys: never NULL)
    schema: pa.Schema  # the output's Arrow schema: passthrough, aggregates, changelog columns
    proctime: bool = False  # ORDER BY a processing-time attribute


def _concat(a: pa.Table | None, b: pa.Table) -> pa.Table:
    return b if a is None or not a.num_rows else pa.concat_tables([a, b])


class OverProcessor(TimedState):
    name = "over"
    arrow = True

    def __init__(self, spec: OverSpec):
        self.spec = spec
        self.args = sorted({a.arg for a in spec.aggs if a.arg})
        self.columns = list(dict.fromkeys([*spec.passthrough, *self.args, ROWNUM, TIME_MS]))
        self.unbounded = spec.frame.preceding is None

    # -- callbacks -------------------------------------------------------------------------
    def handleInputRows(self, key, rows, timerValues) -> Iterator[pd.DataFrame]:
        wm = watermark(timerValues)
        page = self._load()
        out = [self._fire(page, wm)]
        table = packing.read(rows)
        kinds = markers(packing.column(table, ROWNUM))
        if not kinds.data.all():  # the end-of-input markers and state sweeps: no row
            table = table.filter(kinds.data)
        if table.num_rows:
            codes = self._codes(page, table)
            new = table.select(self.columns).append_column(_CODE, pa.array(codes))
            if self.spec.proctime:
                # Processing time: a row is complete on arrival (its time is the micro-batch's).
                out.append(self._emit(*self._aggregate(page, new), "+I"))
            else:
                ts = packing.column(new, TIME_MS)
                late = ts <= (wm if self.unbounded else page["last"][codes])
                if late.any():
                    out.append(self._emit(new.filter(late), None, LATE))
                    new, ts = new.filter(~late), ts[~late]
                if new.num_rows:
                    new = new.append_column(_FIRE, pa.array(np.maximum(ts, wm + 1)))
                    page["pending"] = _concat(page["pending"], new)
        if kinds.ended:
            out.append(self._fire_at_end(page))
        self._save(page, expired=None)
        yield from packing.frames(out)

    def _fire_at_end(self, page: dict) -> pa.Table | None:
        """No row follows (plan.END_FIRST): every waiting row fires, ordered after the
        micro-batch's other rows (plan.END_MS)."""
        out = self._fire(page, PAST_EVERYTHING)
        return None if out is None else out.set_column(
            out.schema.get_field_index(EMIT_TS), EMIT_TS,
            pc.add(out[EMIT_TS], pa.scalar(END_MS, pa.int64())))

    # -- state -----------------------------------------------------------------------------
    def _load(self) -> dict:
        return self.state.load() or {
            "keys": None, "last": np.zeros(0, np.int64),
            "counts": [np.zeros(0, np.int64) for _ in self.spec.aggs],
            "accs": [empty_acc(a, 0) for a in self.spec.aggs],
            "pending": None, "history": None, "timer": None}

    def _save(self, page: dict, expired: int | None) -> None:
        for part in ("pending", "history"):
            if page[part] is not None and not page[part].num_rows:
                page[part] = None
        due = int(packing.column(page["pending"], _FIRE).min()) \
            if page["pending"] is not None else None
        page["timer"] = move_timer(self.handle, page["timer"], expired, due)
        # no key of this bucket yet (an end-of-input marker's call): nothing to keep
        self.state.save(None if page["keys"] is None else page)

    def _codes(self, page: dict, table: pa.Table) -> np.ndarray:
        """Each row's key as its index in the page's keys (new keys appended)."""
        keys = self.spec.keys
        codes, page["keys"], n = page_key_codes(
            page["keys"], {k: packing.column(table, k) for k in keys}, keys)
        if n:
            page["last"] = np.concatenate((page["last"], np.full(n, NO_WATERMARK)))
            page["counts"] = [np.concatenate((c, np.zeros(n, np.int64)))
                              for c in page["counts"]]
            page["accs"] = [np.concatenate((a, empty_acc(call, n)))
                            for a, call in zip(page["accs"], self.spec.aggs)]
        return codes

    # -- firing ----------------------------------------------------------------------------
    def _fire(self, page: dict, wm: int) -> pa.Table | None:
        pending = page["pending"]
        if pending is None or not pending.num_rows:
            return None
        due_mask = packing.column(pending, _FIRE) <= wm
        if not due_mask.any():
            return None
        page["pending"] = pending.filter(~due_mask) if not due_mask.all() else None
        due, results = self._aggregate(page, pending.filter(due_mask))
        code = packing.column(due, _CODE)
        last = np.flatnonzero(np.append(code[1:] != code[:-1], True))
        page["last"][code[last]] = packing.column(due, TIME_MS)[last]
        return self._emit(due, results, "+I")

    def _aggregate(self, page: dict, due: pa.Table) -> tuple[pa.Table, list]:
        """``due`` sorted by (key, time, arrival) and each row's aggregates over its frame;
        the page's kept rows and accumulators moved past them."""
        due = due.take(np.lexsort((packing.column(due, ROWNUM), packing.column(due, TIME_MS),
                                   packing.column(due, _CODE))))
        code, ts = packing.column(due, _CODE), packing.column(due, TIME_MS)
        n = len(ts)
        frame = self.spec.frame
        results = []
        if self.unbounded:
            firsts = np.flatnonzero(np.insert(code[1:] != code[:-1], 0, True))
            keys = code[firsts]
            for i, (call, dtype) in enumerate(zip(self.spec.aggs, self.spec.out_types)):
                arr, valid = as_array(packing.column(due, call.arg), call) if call.arg else (
                    np.zeros(n), np.ones(n, bool))
                counts, accs = page["counts"][i][keys], page["accs"][i][keys]
                column = running(call, arr, valid, firsts, counts, accs, dtype)
                page["counts"][i][keys], page["accs"][i][keys] = counts, accs
                if frame.kind == "RANGE":  # peers share the value of the last row of their time
                    column = _take(column, _run_ends(code, ts))
                results.append(column)
            return due, results
        # Bounded: each key's kept rows (all earlier than its due rows) before its due rows.
        kept, rest = _split(page["history"], np.unique(code))
        hist = _concat(kept, due.select([_CODE, TIME_MS, *self.args]))
        n_kept = 0 if kept is None else kept.num_rows
        # kept rows first
        order = np.lexsort((np.arange(hist.num_rows), packing.column(hist, _CODE)))
        hist, is_due = hist.take(order), order >= n_kept
        hcode, hts = packing.column(hist, _CODE), packing.column(hist, TIME_MS)
        idx = np.flatnonzero(is_due)  # the due rows' places, in ``due``'s order
        seg_first = np.flatnonzero(np.insert(hcode[1:] != hcode[:-1], 0, True))
        lengths = np.diff(np.append(seg_first, len(hcode)))
        floor = np.repeat(seg_first, lengths)
        seg_end = np.repeat(seg_first + lengths, lengths)
        if frame.kind == "ROWS":
            starts, ends = np.maximum(idx - frame.preceding, floor[idx]), idx
            keep = seg_end - np.arange(len(hcode)) <= frame.preceding
        else:
            rank = _time_ranks(hcode, hts, frame.preceding)
            starts = np.searchsorted(rank.pairs, rank.of(hcode[idx], hts[idx] - frame.preceding))
            ends = np.searchsorted(rank.pairs, rank.of(hcode[idx], hts[idx]), side="right") - 1
            keep = hts >= hts[seg_end - 1] - frame.preceding
        page["history"] = _concat(rest, hist.filter(keep))
        for call, dtype in zip(self.spec.aggs, self.spec.out_types):
            arr, valid = as_array(packing.column(hist, call.arg), call) if call.arg else (
                np.zeros(len(hcode)), np.ones(len(hcode), bool))
            results.append(windowed(call, arr, valid, starts, ends, dtype, over=True))
        return due, results

    def _emit(self, rows: pa.Table, results: list | None, op: str) -> pa.Table:
        n = rows.num_rows
        schema = self.spec.schema
        columns = [rows.column(c) for c in self.spec.passthrough]
        for i, call in enumerate(self.spec.aggs):
            kind = schema.field(call.name).type
            columns.append(pa.nulls(n, kind) if results is None else
                           pa.array(results[i], kind, from_pandas=True))
        columns += [pa.array(np.full(n, op, dtype=object), pa.string()), rows.column(TIME_MS),
                    rows.column(ROWNUM)]
        return pa.Table.from_arrays(columns, names=schema.names).cast(schema)


def _split(history: pa.Table | None, codes: np.ndarray) -> tuple[pa.Table | None,
                                                                 pa.Table | None]:
    """(the kept rows of keys ``codes``, the others)."""
    if history is None or not history.num_rows:
        return None, None
    mine = np.isin(packing.column(history, _CODE), codes)
    return history.filter(mine), history.filter(~mine)


def _run_ends(code: np.ndarray, ts: np.ndarray) -> np.ndarray:
    """For each row (sorted by key and time), the last row of its key with its time."""
    change = np.append((code[1:] != code[:-1]) | (ts[1:] != ts[:-1]), True)
    ends = np.flatnonzero(change)
    return np.repeat(ends, np.diff(np.insert(ends + 1, 0, 0)))


def _take(column, index: np.ndarray):
    if isinstance(column, list):
        return [column[i] for i in index]
    return column[index]


@dataclass
class _Ranks:
    """(key, time) pairs as one sortable int64: key code * (number of times) + time's rank."""

    times: np.ndarray  # the distinct times, sorted
    pairs: np.ndarray  # the rows' pairs, sorted (the rows are sorted by key and time)

    def of(self, code: np.ndarray, t: np.ndarray) -> np.ndarray:
        return code * (len(self.times) + 1) + np.searchsorted(self.times, t)


def _time_ranks(code: np.ndarray, ts: np.ndarray, preceding: int) -> _Ranks:
    times = np.unique(np.concatenate((ts, ts - preceding)))
    ranks = _Ranks(times, np.zeros(0, np.int64))
    ranks.pairs = ranks.of(code, ts)
    return ranks
