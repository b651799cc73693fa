"""What the event-time processors (OVER, keep-first deduplication, window aggregation, the
interval and temporal joins) share: the watermark as they read it, their timers, and the numpy
column blocks they keep in state."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import pandas as pd

from operators_lib.stream import packing
from operators_lib.stream.protocol import Processor

TIME_MS = "tw__t"  # the operator's time attribute in epoch milliseconds
NO_WATERMARK = -(2**62)
PAST_EVERYTHING = np.iinfo(np.int64).max  # a watermark at which every pending row is due

Block = dict[str, np.ndarray]  # columns of equal length: rows kept in state


def one_frame(rows: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """A processor's input rows of one call (pyspark may hand them over in several frames,
    packed by bucket: stream/packing.py) as one frame, end-of-input marker included."""
    frames = list(rows)
    return packing.unpack(frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True))


def take(block: Block, index) -> Block:
    return {c: a[index] for c, a in block.items()}


def concat(a: Block | None, b: Block) -> Block:
    return b if a is None else {c: np.concatenate((a[c], b[c])) for c in b}


def watermark(timer_values) -> int:
    wm = timer_values.getCurrentWatermarkInMs()
    return wm if wm > 0 else NO_WATERMARK  # Spark reports 0 before the first watermark


def timer_time(due_ms: int) -> int:
    """The timer for rows due at ``due_ms``. Spark never fires a timer set before 1970 (epoch
    0), where its watermark starts, as Flink's SQL watermark does: a row due earlier fires with
    the first watermark, as in Flink."""
    return max(due_ms, 1)


def move_timer(handle, timer: int | None, expired: int | None, due_ms: int | None
               ) -> int | None:
    """One event-time timer per state value, at the earliest due time (``due_ms``; None:
    nothing waits). ``timer``: the one registered so far; ``expired``: the timer that has just
    fired, if any (Spark removes it). Returns the timer now registered."""
    if expired is not None and timer == expired:
        timer = None
    nxt = timer_time(due_ms) if due_ms is not None else None
    if nxt != timer:
        if timer is not None:
            handle.deleteTimer(timer)
        if nxt is not None:
            handle.registerTimer(nxt)
    return nxt


class TimedState(Processor):
    """A processor keeping one page per bucket under one event-time timer: when the timer
    expires, what is due at the watermark leaves through ``_fire``."""

    hold_ms = 0  # how far behind the stream's watermark this operator's own runs

    def handleExpiredTimer(self, key, timerValues, expiredTimerInfo) -> Iterator[pd.DataFrame]:
        state = self._load()
        out = self._fire(state, self._watermark(timerValues))
        self._save(state, expired=expiredTimerInfo.getExpiryTimeInMs())
        if self.arrow:  # stream/packing.py
            yield from packing.frames([out])
        elif out is not None:
            yield out

    def _watermark(self, timer_values) -> int:
        """The watermark this operator runs by: the stream's, held back by ``hold_ms`` (the
        delay an interval join upstream adds, as Flink's operator holds it back)."""
        wm = watermark(timer_values)
        return wm - self.hold_ms if wm != NO_WATERMARK else wm

    def _load(self):
        raise NotImplementedError

    def _fire(self, state, wm: int) -> pd.DataFrame | None:
        raise NotImplementedError

    def _save(self, state, expired: int | None) -> None:
        raise NotImplementedError
