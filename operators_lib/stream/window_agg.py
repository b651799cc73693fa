"""Event-time window aggregation (TUMBLE, HOP, CUMULATE, SESSION; group windows and window TVFs)
as a transformWithState processor over buckets of keys, vectorized across keys and windows.

Implements ``SELECT keys, bounds, agg(x), .. GROUP BY keys, <window>`` over an append-only
input (Flink's window aggregate):
- A row belongs to each window of the assigner (plan.TimeWindow) that contains its time:
  ``start <= time < end``.
- A window fires once the watermark reaches ``end - 1``: one ``+I`` row per key and window
  with its bounds and aggregates, never updated or retracted. FIRST_VALUE, LAST_VALUE, LISTAGG
  and M2 (of STDDEV_* / VAR_*) read the window's non-NULL values in arrival order
  (window_aggs); the planner allows them in TUMBLE windows over a table only, where Flink
  accumulates in arrival order too (it merges slice accumulators of HOP / CUMULATE windows).
  A firing's rows leave ordered by window end, then by the arrival of the window's first row.
- A row is checked against the watermark when it arrives: it is added to each of its windows
  that has not fired (``end - 1 > watermark``), as Flink does for group windows and window
  TVFs alike. A row whose windows have all fired is late, dropped and reported (``LATE``,
  late.csv); a row left out of some windows only (HOP, CUMULATE) is reported per window
  (``LATE_WINDOW``, its end in ``tw__ts``), so that parity can leave out the same.
- SESSION (stream/sessions.py): a row's window ``[t, t + gap)`` merges with the open sessions
  of its key that it overlaps or touches; a row is late only if its own window has fired and
  it merges into no open session. A kept row touching a session that has already fired starts
  a new one, as in Flink, and is reported (``SESSION_SPLIT``, the fired session's end in
  ``tw__ts``): batch semantics would have merged them, so parity does not apply.
- End of input: the end-of-input marker moves the watermark past every window: all fire. Where
  the last staged part announces the end (plan.END_FIRST), they fire in the micro-batch that
  reads it, after the windows it fired at its watermark (their ends are past it).
- Processing time (``proctime``, stream mode only): a row's time is its micro-batch's
  processing time (the PROCTIME() column) and the stream's watermark is processing time
  (stream/runner.py): a window fires in the first micro-batch whose watermark has passed its
  end, and no row is ever late. End of input fires all windows, as in event time, so a bounded
  input yields its windows (Flink's bounded streaming job ends without firing them).

Runtime: grouped by bucket (a hash of the key), so a micro-batch costs one Python call per
bucket with rows or a due timer, never one per key. State per bucket: one page
(stream/state_view.py) holding the pending (row, window) pairs as numpy columns (key values,
window start and end, aggregate arguments, arrival; SESSION: the rows with their time, windows
recomputed as rows arrive, and the recently fired sessions) and one event-time timer at the
earliest pending ``end - 1``. A firing is one sort of the due pairs by (window end, key, window
start, arrival) and segment reductions (window_aggs.windowed) over all its keys and windows at
once.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from operators_lib.plan import (
    EMIT_TS,
    LATE,
    LATE_WINDOW,
    OP,
    ROWNUM,
    SESSION_SPLIT,
    AggCall,
    TimeWindow,
)
from operators_lib.stream.event_time import (
    NO_WATERMARK,
    PAST_EVERYTHING,
    TIME_MS,
    Block,
    TimedState,
    concat,
    move_timer,
    one_frame,
    take,
)
from operators_lib.stream.protocol import markers
from operators_lib.stream.rows import key_codes
from operators_lib.stream.sessions import admit, sessionize
from operators_lib.stream.window_aggs import as_array, windowed

WS, WE, _RN = "tw__ws", "tw__we", ROWNUM


@dataclass(frozen=True)
class WindowAggSpec:
    window: TimeWindow
    keys: tuple[str, ...]  # key columns of the input (output under the same names)
    key_kinds: tuple[str, ...]  # rows.value_kind per key
    aggs: tuple[AggCall, ...]  # ``arg``: the processor's input column
    out_types: tuple[str, ...]  # pandas dtype per aggregate output
    bounds: tuple[str, str, str]  # output columns: window start, end, time
    cascaded: bool = False  # the input is another window's result: never late
    late_tag: int = 0  # the tw__ts of LATE markers (plan.late_tag of the table read)
    proctime: bool = False  # windows of processing time (module docstring)
    hold_ms: int = 0  # over an interval join's result: fire this much later (plan)


def assign(window: TimeWindow, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each time's windows as (index into ``t``, start, end) arrays, Flink's assigners."""
    size, step, offset = window.size_ms, window.step_ms, window.offset_ms
    if window.kind == "TUMBLE":
        start = t - np.mod(t - offset, size)
        return np.arange(len(t)), start, start + size
    if window.kind == "HOP":
        n = size // step
        last = t - np.mod(t - offset, step)
        idx = np.repeat(np.arange(len(t)), n)
        start = last[idx] - np.tile(np.arange(n), len(t)) * step
        return idx, start, start + size
    # CUMULATE: the windows of the period that end after the time
    n = size // step
    period = t - np.mod(t - offset, size)
    first = (t - period) // step + 1
    counts = n - first + 1
    idx = np.repeat(np.arange(len(t)), counts)
    j = np.arange(len(idx)) - np.repeat(np.cumsum(counts) - counts, counts) + first[idx]
    return idx, period[idx], period[idx] + j * step


def _text(ms: np.ndarray) -> np.ndarray:
    """Epoch milliseconds as the processors' timestamp text (keying.transform_with_state)."""
    return np.char.replace(np.datetime_as_string(ms.astype("datetime64[ms]"), unit="us"),
                           "T", " ").astype(object)


class PendingWindows(TimedState):
    """A bucket's page of pending (row, window) pairs (columns ``tw__ws``, ``tw__we``, the
    row number and what the operator keeps) under one event-time timer at the earliest
    pending window end - 1; the windows due at the watermark fire through ``_output``."""

    name = "windows"

    def _load(self) -> dict:
        return self.state.load() or {}

    def _save(self, page: dict, expired: int | None) -> None:
        pairs = page.get("pairs")
        due = int(pairs[WE].min()) - 1 + self.hold_ms if pairs else None
        page["timer"] = move_timer(self.handle, page.get("timer"), expired, due)
        self.state.save(page if pairs or page.get("fired") else None)

    def _fire(self, page: dict, wm: int) -> pd.DataFrame | None:
        """The windows due at ``wm``, taken out of the page, through ``_output``."""
        pairs = page.get("pairs")
        if not pairs:
            return None
        due = pairs[WE] - 1 <= wm
        if not due.any():
            return None
        page["pairs"] = take(pairs, ~due) if not due.all() else None
        sel = take(pairs, due)
        self._fired(page, sel, wm)
        return self._output(sel)

    def _fired(self, page: dict, sel: Block, wm: int) -> None:
        """Called with the pairs of the windows that have just fired."""

    @staticmethod
    def _keep(page: dict, df: pd.DataFrame, on_time: np.ndarray, cols) -> None:
        """The on-time rows of ``df`` (columns ``cols``) into the page's pending pairs."""
        if on_time.any():
            page["pairs"] = concat(page.get("pairs"), {c: df[c].to_numpy()[on_time]
                                                       for c in cols})

    def _output(self, sel: Block) -> pd.DataFrame:
        raise NotImplementedError


class BufferedRows(PendingWindows):
    """Rows that wait in the page until their window fires (a window TVF's rows, each with
    its window in ``tw__ws``/``tw__we``): the windows due before they arrived fire, the rows
    ``_on_time`` enter the page (columns ``self.kept``), the others are reported by
    ``_late``."""

    kept: tuple[str, ...]

    def handleInputRows(self, key, rows, timerValues) -> Iterator[pd.DataFrame]:
        wm = self._watermark(timerValues)
        page = self._load()
        fired = self._fire(page, wm)
        df = one_frame(rows)
        df = df[markers(df[ROWNUM].to_numpy()).data]  # the end-of-input marker moves the
        # watermark only
        late = None
        if len(df):
            on_time = self._on_time(df, wm)
            self._keep(page, df, on_time, self.kept)
            late = self._late(df[~on_time])
        self._save(page, expired=None)
        yield from (o for o in (fired, late) if o is not None)

    def _on_time(self, df: pd.DataFrame, wm: int) -> np.ndarray:
        raise NotImplementedError

    def _late(self, gone: pd.DataFrame) -> pd.DataFrame | None:
        raise NotImplementedError


class WindowAggProcessor(PendingWindows):
    def __init__(self, spec: WindowAggSpec):
        self.spec = spec
        self.args = sorted({a.arg for a in spec.aggs if a.arg})
        self.hold_ms = spec.hold_ms

    def handleInputRows(self, key, rows, timerValues) -> Iterator[pd.DataFrame]:
        wm = self._watermark(timerValues)
        page = self._load()
        df = one_frame(rows)
        if self.spec.cascaded:
            yield from self._cascaded(page, df, wm)
            return
        fired = self._fire(page, wm)  # windows due before these rows arrived
        # The end of input announced in the last part (plan.END_FIRST): no row follows.
        kinds = markers(df[ROWNUM].to_numpy())
        df = df[kinds.data]  # the end-of-input markers move the watermark only
        late = None
        # In processing time a row arrives at its own time: it is never late.
        admitted = NO_WATERMARK if self.spec.proctime else wm
        if len(df) and self.spec.window.kind == "SESSION":
            late = self._add_to_sessions(page, df.sort_values(ROWNUM), admitted)
        elif len(df):
            idx, start, end = assign(self.spec.window, df[TIME_MS].to_numpy(dtype=np.int64))
            on_time = end - 1 > admitted
            self._add_pairs(page, df, idx[on_time], start[on_time], end[on_time])
            late = self._late(df[_RN].to_numpy(), idx, end, on_time)
        # Every window left fires: their ends are past this micro-batch's watermark, so they
        # leave after the windows it fired, as they would in micro-batches of their own.
        last = self._fire(page, PAST_EVERYTHING) if kinds.ended else None
        self._save(page, expired=None)
        yield from (o for o in (fired, late, last) if o is not None)

    def _cascaded(self, page: dict, df: pd.DataFrame, wm: int) -> Iterator[pd.DataFrame]:
        """Rows of an upstream window, fired by the watermark this micro-batch brings: in
        Flink they arrive before that watermark, so none is late and they fire with it."""
        # The upstream's late-row reports travel on (its output: +I rows and markers).
        kinds = markers(df[ROWNUM].to_numpy(), df[OP].to_numpy())
        passed = self._markers(((df[OP].to_numpy()[kinds.passed],
                                 df[ROWNUM].to_numpy()[kinds.passed],
                                 df[EMIT_TS].to_numpy()[kinds.passed]),))
        if passed is not None:
            yield passed
        df = df[kinds.data]
        splits = None
        if len(df) and self.spec.window.kind == "SESSION":
            splits = self._add_to_sessions(page, df.sort_values(ROWNUM), wm, cascaded=True)
        elif len(df) and self.spec.window.kind == "GIVEN":
            self._add_pairs(page, df, np.arange(len(df)), df[WS].to_numpy(dtype=np.int64),
                            df[WE].to_numpy(dtype=np.int64))
        elif len(df):
            self._add_pairs(page, df, *assign(self.spec.window,
                                              df[TIME_MS].to_numpy(dtype=np.int64)))
        fired = self._fire(page, wm)
        self._save(page, expired=None)
        yield from (o for o in (fired, splits) if o is not None)

    def _add_pairs(self, page: dict, df: pd.DataFrame, idx: np.ndarray, start: np.ndarray,
                   end: np.ndarray) -> None:
        """Rows ``idx`` of ``df`` into the windows (start, end) given for them."""
        if len(idx):
            pairs = {c: df[c].to_numpy()[idx] for c in (*self.spec.keys, *self.args, _RN)}
            pairs[WS], pairs[WE] = start, end
            page["pairs"] = concat(page.get("pairs"), pairs)

    # -- firing ----------------------------------------------------------------------------
    def _fired(self, page: dict, sel: Block, wm: int) -> None:
        if self.spec.window.kind == "SESSION":
            self._remember_fired(page, sel, wm)

    def _output(self, sel: Block) -> pd.DataFrame:
        """One row per key and window of the fired pairs, its aggregates by segment."""
        code = key_codes(pd.DataFrame({k: sel[k] for k in self.spec.keys}, index=np.arange(
            len(sel[_RN]))), list(self.spec.keys))
        order = np.lexsort((sel[_RN], sel[WS], code, sel[WE]))
        sel, code = take(sel, order), code[order]
        n = len(code)
        change = np.ones(n, bool)
        change[1:] = (code[1:] != code[:-1]) | (sel[WS][1:] != sel[WS][:-1]) | (
            sel[WE][1:] != sel[WE][:-1])
        starts = np.flatnonzero(change)
        ends = np.append(starts[1:] - 1, n - 1)
        segment = np.cumsum(change) - 1
        out: dict[str, object] = {}
        for k, kind in zip(self.spec.keys, self.spec.key_kinds):
            out[k] = _values(sel[k][starts], kind)
        ws, we = sel[WS][starts], sel[WE][starts]
        for name, ms in zip(self.spec.bounds, (ws, we, we - 1)):
            out[name] = _text(ms)
        for call, dtype in zip(self.spec.aggs, self.spec.out_types):
            arr, valid = as_array(sel[call.arg], call) if call.arg else (
                np.zeros(n), np.ones(n, bool))
            if call.distinct:  # each value once per window and key
                valid = valid & ~pd.DataFrame({"s": segment, "v": sel[call.arg]}).duplicated(
                    ).to_numpy()
            out[call.name] = windowed(call, arr, valid, starts, ends, dtype)
        out[OP] = np.full(len(starts), "+I", dtype=object)
        out[EMIT_TS] = we - 1
        out[ROWNUM] = sel[_RN][starts]
        return pd.DataFrame(out)

    def _late(self, rownum: np.ndarray, idx: np.ndarray, end: np.ndarray,
              on_time: np.ndarray) -> pd.DataFrame | None:
        """``LATE`` for each row left out of all its windows; ``LATE_WINDOW`` (with the
        window's end) for each window a row with some on-time windows was left out of."""
        kept = np.zeros(len(rownum), bool)
        kept[idx[on_time]] = True
        partial = ~on_time & kept[idx]
        late = np.flatnonzero(~kept)
        return self._markers(((LATE, rownum[late], np.full(len(late), self.spec.late_tag)),
                              (LATE_WINDOW, rownum[idx[partial]], end[partial])))

    def _markers(self, kinds) -> pd.DataFrame | None:
        return marker_rows((*self.spec.keys, *self.spec.bounds,
                            *(a.name for a in self.spec.aggs)), kinds)

    # -- sessions --------------------------------------------------------------------------
    def _add_to_sessions(self, page: dict, df: pd.DataFrame, wm: int, cascaded: bool = False
                         ) -> pd.DataFrame | None:
        """Admit the new rows (in arrival order) into the open sessions, recompute every
        pending row's session, and report the late rows and those touching a fired session."""
        gap = self.spec.window.size_ms
        new = {c: df[c].to_numpy() for c in (*self.spec.keys, *self.args, _RN, TIME_MS)}
        new[TIME_MS] = new[TIME_MS].astype(np.int64)
        pending, fired = page.get("pairs"), page.get("fired")
        n_old, n_new = len(pending[_RN]) if pending else 0, len(new[_RN])
        n_fired = len(fired[WE]) if fired else 0
        blocks = [b for b in (pending, new, fired) if b]
        code = key_codes(pd.DataFrame({k: np.concatenate([b[k] for b in blocks])
                                       for k in self.spec.keys},
                                      index=np.arange(n_old + n_new + n_fired)),
                         list(self.spec.keys))
        code_old, code_new = code[:n_old], code[n_old:n_old + n_new]
        t_old = pending[TIME_MS] if pending else np.zeros(0, np.int64)
        kept = np.ones(n_new, bool) if cascaded else admit(code_old, t_old, code_new,
                                                            new[TIME_MS], gap, wm)
        split_end = _touched(code_new, new[TIME_MS], code[n_old + n_new:], fired, gap)
        split = kept & (split_end >= 0)
        if kept.any():
            rows = take(new, kept)
            all_rows = concat(pending, {**rows, WS: rows[TIME_MS], WE: rows[TIME_MS]})
            all_code = np.concatenate((code_old, code_new[kept]))
            all_rows[WS], all_rows[WE] = sessionize(all_code, all_rows[TIME_MS], gap)
            page["pairs"] = all_rows
        late = np.flatnonzero(~kept)
        return self._markers(((LATE, new[_RN][late], np.full(len(late), self.spec.late_tag)),
                              (SESSION_SPLIT, new[_RN][split], split_end[split])))

    def _remember_fired(self, page: dict, sel: dict, wm: int) -> None:
        """Keep the sessions just fired (keys, start, end) while a row on time could still
        touch them (their end + gap - 1 > watermark), to report such a row."""
        gap = self.spec.window.size_ms
        fired = {k: sel[k] for k in (*self.spec.keys, WS, WE)}
        fired = concat(page.get("fired"), fired)
        fired = take(fired, fired[WE] + gap - 1 > wm)
        page["fired"] = fired if len(fired[WE]) else None

class SessionRowsProcessor(WindowAggProcessor):
    """A SESSION window TVF's rows (plan.SessionRows): the rows wait in their sessions as the
    aggregate's do, and leave when the session fires, each ``+I`` with the session's bounds,
    ordered by session end, then arrival. ``columns``: the row's columns (``integral``: those
    of an integer type, which pandas may hand over as float64)."""

    def __init__(self, spec: WindowAggSpec, columns: tuple[str, ...], integral: frozenset[str]):
        super().__init__(spec)
        self.args = list(columns)
        self.integral = integral

    def _output(self, sel: Block) -> pd.DataFrame:
        sel = take(sel, np.lexsort((sel[_RN], sel[WE])))
        out: dict[str, object] = {c: pd.array(sel[c], dtype="Int64") if c in self.integral
                                  else sel[c] for c in self.args}
        for name, ms in zip(self.spec.bounds, (sel[WS], sel[WE], sel[WE] - 1)):
            out[name] = _text(ms)
        out[OP] = np.full(len(sel[_RN]), "+I", dtype=object)
        out[EMIT_TS] = sel[WE] - 1
        out[ROWNUM] = sel[_RN]
        return pd.DataFrame(out)

    def _markers(self, kinds) -> pd.DataFrame | None:
        return marker_rows((*self.args, *self.spec.bounds), kinds)


def marker_rows(cols, kinds) -> pd.DataFrame | None:
    """Marker rows (``cols`` NULL): (kind or kinds, row numbers, ``tw__ts`` values) per group;
    None if there are none."""
    n = sum(len(r) for _, r, _ in kinds)
    if not n:
        return None
    out: dict[str, object] = {c: [None] * n for c in cols}
    out[OP] = np.concatenate([np.broadcast_to(np.asarray(k, dtype=object), len(r))
                              for k, r, _ in kinds])
    out[EMIT_TS] = np.concatenate([ts for _, _, ts in kinds]).astype(np.int64)
    out[ROWNUM] = np.concatenate([r for _, r, _ in kinds]).astype(np.int64)
    return pd.DataFrame(out)


def _touched(code: np.ndarray, t: np.ndarray, fcode: np.ndarray, fired: dict | None,
             gap: int) -> np.ndarray:
    """Per row: the end of a fired session of its key that its window touches, else -1 (the
    first such session ending at or after its time)."""
    out = np.full(len(t), -1, np.int64)
    if not fired:
        return out
    rows = pd.DataFrame({"c": code, "t": t, "i": np.arange(len(t))}).sort_values("t")
    sessions = pd.DataFrame({"c": fcode, "fe": fired[WE].astype(np.int64),
                             "fs": fired[WS].astype(np.int64)}).sort_values("fe")
    m = pd.merge_asof(rows, sessions, left_on="t", right_on="fe", by="c",
                      direction="forward")
    hit = (m["fs"].to_numpy(dtype=float) <= m["t"].to_numpy() + gap)
    out[m["i"].to_numpy()[hit]] = m["fe"].to_numpy()[hit].astype(np.int64)
    return out


def _values(values: np.ndarray, kind: str) -> list:
    """Key values for the output: NULL as None, integers as int (a nullable integer column
    reaches pandas as float64)."""
    if kind == "int":
        return [None if v is None or v != v else int(v) for v in values.tolist()]
    return [None if v is None or v != v else v for v in values.tolist()]
