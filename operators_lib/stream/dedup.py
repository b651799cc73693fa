"""Event-time deduplication keeping the first row per key (Flink's row-time Deduplicate,
keep-first), as a transformWithState processor over buckets of keys::

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

Runtime: grouped by bucket (a hash of the key, stream/keying.py), rows in and out as Arrow
(stream/packing.py), so a micro-batch costs one Python call per bucket with rows or a due
timer. State per bucket: one page (stream/state_view.py: numpy columns and an Arrow table)
holding its keys (the key columns and whether each has fired) and the row waiting for each
key that has not, with the time it fires at; one event-time timer at the earliest of those.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
import pyarrow as pa

from operators_lib.changelog import INSERT
from operators_lib.plan import LATE, ROWNUM
from operators_lib.stream import packing
from operators_lib.stream.event_time import TIME_MS, TimedState, move_timer, watermark
from operators_lib.stream.protocol import markers
from operators_lib.stream.rows import page_key_codes

_FIRE, _CODE = "tw__fire", "tw__code"


class FirstRowProcessor(TimedState):
    name = "dedup_first"
    arrow = True

    def __init__(self, cols: tuple[str, ...], keys: tuple[str, ...], rank_col: str,
                 rank_output: bool, schema: pa.Schema):
        self.cols = cols  # input columns, copied to the output
        self.keys = keys  # the key's columns (keying.grouping_keys: never NULL)
        self.rank_col = rank_col
        self.rank_value = 1 if rank_output else None
        self.schema = schema  # the output's Arrow schema: cols, rank, changelog columns

    def handleInputRows(self, key, rows, timerValues) -> Iterator[pd.DataFrame]:
        wm = watermark(timerValues)
        page = self._load()
        out = []
        table = packing.read(rows)
        data = markers(packing.column(table, ROWNUM)).data  # the end-of-input marker: no row
        if not data.all():
            table = table.filter(data)
        if table.num_rows:
            late = packing.column(table, TIME_MS) < wm
            if late.any():
                out.append(self._markers(table.filter(late)))
            table = table.filter(~late)
        if table.num_rows:
            codes = self._codes(page, table)
            waiting = ~page["fired"][codes]  # a fired key's later rows are duplicates
            table, codes = table.filter(waiting), codes[waiting]
        if table.num_rows:
            self._wait(page, table, codes, wm)
        self._save(page, expired=None)
        yield from packing.frames(out)

    # -- state -----------------------------------------------------------------------------
    def _load(self) -> dict:
        return self.state.load() or {"keys": None, "fired": np.zeros(0, bool),
                                     "waiting": None, "timer": None}

    def _save(self, page: dict, expired: int | None) -> None:
        waiting = page["waiting"]
        due = int(packing.column(waiting, _FIRE).min()) if waiting is not None else None
        page["timer"] = move_timer(self.handle, page["timer"], expired, due)
        # no key of this bucket yet (an end-of-input marker's call): nothing to keep
        self.state.save(None if page["keys"] is None else page)

    def _codes(self, page: dict, table: pa.Table) -> np.ndarray:
        """Each row's key as its index in the page's keys (new keys appended)."""
        codes, page["keys"], n = page_key_codes(
            page["keys"], {k: packing.column(table, k) for k in self.keys}, self.keys)
        page["fired"] = np.concatenate((page["fired"], np.zeros(n, bool)))
        return codes

    # -- waiting and firing ----------------------------------------------------------------
    def _wait(self, page: dict, table: pa.Table, codes: np.ndarray, wm: int) -> None:
        """Each key's earliest on-time row (ties: the first to arrive) waits, unless the row
        already waiting is earlier or as early."""
        ts, rownum = packing.column(table, TIME_MS), packing.column(table, ROWNUM)
        order = np.lexsort((rownum, ts, codes))
        first = order[np.flatnonzero(np.insert(codes[order][1:] != codes[order][:-1], 0, True))]
        new = table.select([*self.cols, TIME_MS, ROWNUM]).take(first)
        new = new.append_column(_CODE, pa.array(codes[first])).append_column(
            _FIRE, pa.array(np.maximum(ts[first], wm + 1)))
        old = page["waiting"]
        if old is not None:
            old_code = packing.column(old, _CODE)
            waited = np.full(len(page["fired"]), np.inf)  # per key: the waiting row's time
            waited[old_code] = packing.column(old, TIME_MS)
            new = new.filter(waited[codes[first]] > ts[first])  # replaces it only if earlier
            old = old.filter(~np.isin(old_code, packing.column(new, _CODE)))
        page["waiting"] = new if old is None or not old.num_rows else pa.concat_tables([old, new])

    def _fire(self, page: dict, wm: int) -> pa.Table | None:
        waiting = page["waiting"]
        if waiting is None:
            return None
        due = packing.column(waiting, _FIRE) <= wm
        if not due.any():
            return None
        rows = waiting.filter(due)
        page["waiting"] = waiting.filter(~due) if not due.all() else None
        page["fired"][packing.column(rows, _CODE)] = True
        n = rows.num_rows
        columns = [rows.column(c) for c in self.cols] + [
            pa.array(np.full(n, self.rank_value, dtype=object), pa.int64()),
            pa.array(np.full(n, INSERT, dtype=object), pa.string()), rows.column(TIME_MS),
            rows.column(ROWNUM)]
        return pa.Table.from_arrays(columns, names=self.schema.names).cast(self.schema)

    def _markers(self, late: pa.Table) -> pa.Table:
        n = late.num_rows
        columns = [pa.nulls(n, self.schema.field(c).type) for c in (*self.cols, self.rank_col)]
        columns += [pa.array(np.full(n, LATE, dtype=object), pa.string()),
                    pa.array(np.zeros(n, np.int64)), late.column(ROWNUM)]
        return pa.Table.from_arrays(columns, names=self.schema.names).cast(self.schema)
