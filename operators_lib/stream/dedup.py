"""Event-time deduplication keeping the first row per key (Flink's row-time Deduplicate,
keep-first), as a transformWithState processor with one instance per key::

    SELECT .. FROM (SELECT .., ROW_NUMBER() OVER (PARTITION BY k ORDER BY rowtime ASC) AS rn
                    FROM t) WHERE rn = 1

Changelog rules (Flink 2.3's output, tests/cases/topn/dedup_keep_first):
- Insert-only: each key emits ``+I`` once, for its earliest row, when the watermark has passed
  that row's time (on a watermark advance after the row arrived, as OVER fires).
- Until then an earlier row replaces the waiting one; of equal times the first to arrive stays.
- A row whose time is behind the watermark (time < watermark) is late: dropped, and reported
  (``LATE``) for the late-row report and parity. Flink's OVER drops ``time <= watermark``; its
  Deduplicate keeps a row exactly at the watermark.
- Once a key has fired, its later on-time rows are duplicates: dropped, not reported (a late
  row of a fired key is reported: it may be earlier than the row the key emitted).

Keep-last and processing-time deduplication emit at once and run as a TopN (stream/topn.py).

State per key (one value, read and written once per key per micro-batch): the waiting row with
its time and arrival, or the fact that the key has fired; one event-time timer.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle

from operators_lib.changelog import INSERT
from operators_lib.plan import EMIT_TS, LATE, OP, ROWNUM
from operators_lib.stream.event_time import STATE_SCHEMA, TIME_MS, one_frame, timer_time, watermark
from operators_lib.stream.rows import marker_output


@dataclass
class _KeyState:
    row: tuple | None = None  # the earliest row so far, waiting for the watermark
    time: int = 0  # its event time (epoch ms)
    rownum: int = 0  # its arrival
    fire_at: int | None = None  # its timer
    fired: bool = False  # the key has emitted its first row


class FirstRowProcessor(StatefulProcessor):
    def __init__(self, cols: tuple[str, ...], kinds: tuple[str, ...], rank_col: str,
                 rank_output: bool):
        self.cols = cols  # input columns, copied to the output
        self.kinds = kinds  # rows.value_kind per column
        self.rank_col = rank_col
        self.rank_value = 1 if rank_output else None

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle
        self.state = handle.getValueState("dedup_first", STATE_SCHEMA)

    def handleInputRows(self, key, rows, timerValues) -> Iterator[pd.DataFrame]:
        wm = watermark(timerValues)
        value = self.state.get()
        st = _KeyState() if value is None else pickle.loads(value[0])
        df = one_frame(rows)
        df = df[df[ROWNUM] >= 0].sort_values(ROWNUM, kind="stable")  # no end-of-input marker
        times = df[TIME_MS].to_numpy()
        late = times < wm
        if late.any():
            yield marker_output(pd.DataFrame({OP: LATE, ROWNUM: df[ROWNUM][late]}),
                                [*self.cols, self.rank_col])
        if not st.fired:
            on_time = df[~late]
            if len(on_time):
                first = int(np.argmin(on_time[TIME_MS].to_numpy()))  # ties: earliest arrival
                t = int(on_time[TIME_MS].iloc[first])
                if st.row is None or t < st.time:
                    st.row = tuple(_python(v, k) for v, k in
                                   zip(on_time[list(self.cols)].iloc[first], self.kinds))
                    st.time, st.rownum = t, int(on_time[ROWNUM].iloc[first])
                    self._set_timer(st, timer_time(max(t, wm + 1)))
        self.state.update((pickle.dumps(st, protocol=5),))

    def handleExpiredTimer(self, key, timerValues, expiredTimerInfo) -> Iterator[pd.DataFrame]:
        value = self.state.get()
        if value is None:
            return
        st = pickle.loads(value[0])
        if st.row is None or st.fired:
            return
        out = pd.DataFrame([[*st.row, self.rank_value, INSERT, st.time, st.rownum]],
                           columns=[*self.cols, self.rank_col, OP, EMIT_TS, ROWNUM])
        st.row, st.fired, st.fire_at = None, True, None  # Spark has removed the fired timer
        self.state.update((pickle.dumps(st, protocol=5),))
        yield out

    def _set_timer(self, st: _KeyState, at: int) -> None:
        if st.fire_at == at:
            return
        if st.fire_at is not None:
            self.handle.deleteTimer(st.fire_at)
        self.handle.registerTimer(at)
        st.fire_at = at

    def close(self) -> None:
        pass


def _python(v, kind: str):
    """A pandas value as a plain Python value (NULL: None; a nullable integer column reaches
    pandas as float64)."""
    if v is None or v is pd.NaT or (isinstance(v, float) and v != v):
        return None
    if kind == "int":
        return int(v)
    return v.item() if isinstance(v, np.generic) else v
