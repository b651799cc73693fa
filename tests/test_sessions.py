"""The vectorized SESSION window functions (operators_lib/stream/sessions.py) against a direct,
row-at-a-time reading of Flink's merging window set (MergingWindowProcessFunction: add the
row's window [t, t + gap), merge it with every open session it overlaps or touches, drop the
result if its end - 1 <= watermark), on random rows."""

from __future__ import annotations

import numpy as np
import pytest

from operators_lib.stream.sessions import admit, sessionize


def _flink(code_old, t_old, code, t, gap: int, wm: int):
    """(kept per new row, (start, end) per kept row in state order: old rows, then kept new)."""
    sessions: dict[int, list[list[int]]] = {}  # key -> open sessions [start, end, rows...]

    def add(c: int, ti: int, row: int, check: bool) -> bool:
        merged = [ti, ti + gap, row]
        rest = []
        for s in sessions.get(c, []):
            if s[0] <= merged[1] and s[1] >= merged[0]:
                merged = [min(s[0], merged[0]), max(s[1], merged[1]), *merged[2:], *s[2:]]
            else:
                rest.append(s)
        if check and merged[1] - 1 <= wm:
            return False  # late: its session has fired (retired, state unchanged)
        sessions[c] = rest + [merged]
        return True

    for i, (c, ti) in enumerate(zip(code_old, t_old)):
        add(int(c), int(ti), i, check=False)
    kept = [add(int(c), int(ti), len(t_old) + i, check=True) for i, (c, ti) in enumerate(
        zip(code, t))]
    bounds = {}
    for ss in sessions.values():
        for s in ss:
            for row in s[2:]:
                bounds[row] = (s[0], s[1])
    return np.array(kept), bounds


@pytest.mark.parametrize("seed", range(40))
def test_admit_and_sessionize_follow_flinks_merging_windows(seed):
    rng = np.random.default_rng(seed)
    gap = int(rng.integers(1, 6))
    n_old, n_new = int(rng.integers(0, 8)), int(rng.integers(1, 14))
    code_old, code = rng.integers(0, 3, n_old), rng.integers(0, 3, n_new)
    wm = int(rng.integers(10, 30))
    # State rows are in open sessions: their sessions end after the watermark.
    t_old = wm + 1 + rng.integers(0, 15, n_old)
    t = rng.integers(0, 45, n_new)
    expected_kept, bounds = _flink(code_old, t_old, code, t, gap, wm)
    kept = admit(code_old, t_old, code, t, gap, wm)
    assert kept.tolist() == expected_kept.tolist()
    codes = np.concatenate((code_old, code[kept]))
    times = np.concatenate((t_old, t[kept]))
    start, end = sessionize(codes, times, gap)
    rows = list(range(n_old)) + [n_old + i for i in np.flatnonzero(kept)]
    assert [(int(a), int(b)) for a, b in zip(start, end)] == [bounds[r] for r in rows]
