"""SESSION windows over numpy columns, across all keys of a bucket at once (stream/window_agg.py).

Flink's merging windows: a row's window is ``[t, t + gap)``; windows of a key that overlap or
touch (``t2 - t1 <= gap``) merge into one session ``[first t, last t + gap)``. Only sessions
that have not fired take part: a session fires when the watermark reaches its end - 1 and is
then gone, so a row arriving later starts a new session even where it touches the old one.
Hence the rows in state (not fired) of a key are exactly its open sessions, and those are the
runs of its rows sorted by time with gaps of at most ``gap``.

A new row whose own window has fired (``t + gap - 1 <= watermark``) is late unless it merges
into an open session at its arrival: unless a row of its key that arrived before it, in state
or kept in the same micro-batch, lies within ``gap`` of its time.
"""

from __future__ import annotations

import numpy as np


def sessionize(code: np.ndarray, t: np.ndarray, gap: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's session (start, end): the rows of a key (``code``) sorted by time, cut where
    two neighbours are more than ``gap`` apart."""
    n = len(t)
    order = np.lexsort((t, code))
    c, s = code[order], t[order]
    cut = np.ones(n, bool)
    cut[1:] = (c[1:] != c[:-1]) | (s[1:] - s[:-1] > gap)
    first = np.flatnonzero(cut)
    last = np.append(first[1:], n) - 1
    session = np.cumsum(cut) - 1
    start, end = np.empty(n, np.int64), np.empty(n, np.int64)
    start[order] = s[first][session]
    end[order] = s[last][session] + gap
    return start, end


def admit(code_old: np.ndarray, t_old: np.ndarray, code: np.ndarray, t: np.ndarray, gap: int,
          wm: int) -> np.ndarray:
    """Which new rows (in arrival order) are kept: on time, or merged into an open session by
    a row of their key within ``gap`` that arrived before them (state rows ``*_old`` first).
    A late row kept this way can admit later ones in turn: repeated until nothing changes."""
    kept = t + gap - 1 > wm
    if kept.all():
        return kept
    arrival = np.concatenate((np.full(len(t_old), -1), np.arange(len(t))))
    codes, times = np.concatenate((code_old, code)), np.concatenate((t_old, t))
    while True:
        waiting = np.flatnonzero(~kept)
        support = np.concatenate((np.ones(len(t_old), bool), kept))
        first = _earliest_within(codes[support], times[support], arrival[support],
                                 code[waiting], t[waiting], gap)
        admitted = waiting[first < waiting]
        if not len(admitted):
            return kept
        kept[admitted] = True


def _earliest_within(code: np.ndarray, t: np.ndarray, arrival: np.ndarray, q_code: np.ndarray,
                     q_t: np.ndarray, gap: int) -> np.ndarray:
    """For each query (q_code, q_t): the earliest arrival among rows of its code with time
    within ``gap`` of q_t (a large number where there is none)."""
    none = np.iinfo(np.int64).max
    if not len(t) or not len(q_t):
        return np.full(len(q_t), none)
    lo_t, hi_t = int(t.min()) - gap - 1, int(t.max()) + gap + 1
    width = hi_t - lo_t + gap + 2
    if (int(max(code.max(), q_code.max())) + 1) * width >= 2**62:
        raise OverflowError("session merge: times of one bucket span too far to index")
    # One sorted axis: key code, then time (queries clipped to the span: same answer).
    axis = code.astype(np.int64) * width + (t - lo_t)
    order = np.argsort(axis, kind="stable")
    axis, arrival = axis[order], arrival[order]
    q = q_code.astype(np.int64) * width + (np.clip(q_t, lo_t, hi_t) - lo_t)
    lo = np.searchsorted(axis, q - gap, side="left")
    hi = np.searchsorted(axis, q + gap, side="right")
    # Range minima over [lo, hi): np.minimum.reduceat on interleaved bounds (+ a sentinel).
    padded = np.append(arrival, none)
    mins = np.minimum.reduceat(padded, np.ravel(np.column_stack((lo, hi))))[::2]
    return np.where(hi > lo, mins, none)
