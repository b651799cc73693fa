"""The split-factor rule of the hotspot DAG (operators_lib/runs/hotspot.py), on measured skews."""

from __future__ import annotations

import pytest

from operators_lib.runs.hotspot import Skew, choose_split


def _skew(share: float, rows: int = 1000) -> Skew:
    return Skew(rows, 10, share, 1, [])


@pytest.mark.parametrize(("share", "parallelism", "current", "expected"), [
    (0.3, 2, 1, 1),  # no partition above one task's share: single level
    (0.5, 2, 1, 1),  # exactly one task's share
    (0.9, 2, 1, 4),  # 1.8 tasks' worth: 2 x 1.8 = 3.6 -> 4
    (1.0, 2, 1, 4),  # a global TopN at parallelism 2
    (1.0, 64, 1, 128),  # ... at parallelism 64: capped at max_split 128
    (0.9, 2, 8, 8),  # needs 4, but twice the load would need 8: keep 8 (no rebuild on a dip)
    (0.3, 2, 8, 4),  # twice the load (1.2) needs 4: lower to 4
    (0.2, 2, 4, 1),  # twice the load (0.8) needs 1: back to a single level
    (0.55, 2, 4, 4),  # load 1.1 needs 4: unchanged
])
def test_choose_split(share, parallelism, current, expected):
    assert choose_split(_skew(share), current, parallelism, 128)[0] == expected


def test_no_recent_input_keeps_the_factor():
    split, why = choose_split(_skew(0.0, rows=0), 8, 2, 128)
    assert split == 8 and "no recent input" in why
