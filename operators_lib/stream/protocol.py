"""What every stateful processor is to the runtime (stream/runner.py, tests/harness.py), and
how it tells the marker rows of its input from data.

A processor has a ``name``, its state variable's and its pages' (stream/state_view.py: the
page's version is checked when it is read), and says whether its rows come in and go out as
Arrow (``arrow``: packed, stream/packing.py) or as pandas frames. Unless it keeps slot pages
(stream/rows.py), its state is one page per bucket (``PageState``).

Besides data, an input may hold marker rows (plan.py), told apart by ``tw__rownum`` and, where
the processor reads a changelog, ``tw__op``: ``markers`` reads them for every processor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle

from operators_lib.plan import END_FIRST, MARKERS, SWEEP_FIRST
from operators_lib.stream.state_view import PageState


class Processor(StatefulProcessor):
    name: ClassVar[str]  # the state variable's name (state_view.VERSIONS)
    arrow: ClassVar[bool] = False  # rows in and out as Arrow (stream/packing.py)

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle
        self.state = PageState(handle, self.name)

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class Markers:
    """One call's input rows by kind (masks over its rows)."""

    data: np.ndarray  # rows of data
    passed: np.ndarray  # upstream markers (plan.MARKERS: late rows, expired keys ...)
    sweep: int | None  # the row number of a state sweep (plan.SWEEP_FIRST), if one came
    ended: bool  # the input ends here (plan.END_FIRST): no row follows


def markers(rownum: np.ndarray, op: np.ndarray | None = None) -> Markers:
    """The kinds of rows numbered ``rownum`` (``op``: their ``tw__op``, where the processor
    reads a changelog; without it no row is an upstream marker). The end-of-input marker
    (-1) is neither data nor passed on: it only moves the watermark."""
    passed = np.zeros(len(rownum), bool) if op is None else np.isin(op, MARKERS)
    sweeps = rownum[rownum <= SWEEP_FIRST]
    return Markers((rownum >= 0) & ~passed, passed,
                   int(sweeps[0]) if len(sweeps) else None, bool((rownum <= END_FIRST).any()))
