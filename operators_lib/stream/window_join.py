"""Window join: two window aggregates, or two window TVFs' rows, joined on their window start
and end (and keys), ``INNER | LEFT | RIGHT | FULL | SEMI | ANTI`` (Flink's window join;
Nexmark q8 joins two window aggregates; SEMI / ANTI: ``[NOT] IN`` / ``[NOT] EXISTS``
correlated on the window bounds).

Changelog rules: a window's rows of both sides are joined once, when the window fires, and
every result row is emitted as ``+I``: matched pairs, and for outer joins each row of the
preserved side without a match, padded with NULLs; SEMI: each left row with a match, once;
ANTI: each left row without one. Nothing is updated or retracted. NULL keys never match. A
pair matches when its keys are equal and the residual condition (the ON clause's other
conditions) is TRUE (SQL's three-valued logic: NULL is not TRUE).

Window aggregates (``join_windows``): both fire a window at the same watermark, so all rows of
a window, of both sides, reach this step in one micro-batch: the join is stateless. The
micro-batch (both sides in one union, tagged by side) is hash-partitioned by the equality keys
and each task matches its rows with one pandas merge, across all its windows and keys at once.
Marker rows (late rows upstream) pass through unchanged.

Window TVFs' rows (``WindowRowsJoinProcessor``): the rows of both sides wait in bucket pages
(stream/window_agg.BufferedRows) until their window fires, then are matched the same way. A
row whose window has fired when it arrives is late: dropped and reported with its table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from operators_lib.plan import EMIT_TS, LATE, OP, ROWNUM, Cond
from operators_lib.stream.calc import truth
from operators_lib.stream.event_time import Block
from operators_lib.stream.join import SIDE
from operators_lib.stream.window_agg import WE, WS, BufferedRows, marker_rows
from operators_lib.stream.window_rank import task_rows


@dataclass(frozen=True)
class WindowJoinSpec:
    kind: str  # INNER | LEFT | RIGHT | FULL | SEMI | ANTI
    keys: tuple[str, ...]  # the union's equality key columns (window bounds included)
    left: tuple[str, ...]  # the union's columns of each side
    right: tuple[str, ...]
    carried: tuple[str, ...]  # columns every row keeps (the harness's micro-batch id)
    integral: tuple[str, ...] = ()  # integer columns (pandas may hand them over as float64)
    residual: Cond | None = None  # over the union's columns

    @property
    def output(self) -> tuple[str, ...]:
        """The result's columns: SEMI and ANTI joins give the left side's only."""
        return self.left if self.kind in ("SEMI", "ANTI") else self.left + self.right


def join_windows(batches: Iterator[pa.RecordBatch], spec: WindowJoinSpec
                 ) -> Iterator[pa.RecordBatch]:
    """One task's rows of a micro-batch (whole keys of both sides), joined."""
    table, data = task_rows(batches)
    if table is None:
        return
    side = table[SIDE].to_numpy()
    left = table.filter(pa.array(data & (side == 0)))
    right = table.filter(pa.array(data & (side == 1)))
    on = [*spec.keys, *spec.carried]  # the harness's rows join within their micro-batch
    li, ri = _pairs(left.select(on).to_pandas(), right.select(on).to_pandas(), spec.kind,
                    pair_test(spec, lambda c: left[c].to_numpy(zero_copy_only=False),
                              lambda c: right[c].to_numpy(zero_copy_only=False)))
    lrows, rrows = left.take(pa.array(li, mask=li < 0)), right.take(pa.array(ri, mask=ri < 0))
    out = {c: (lrows if c in spec.left else rrows)[c] for c in spec.output}
    out[OP] = pa.array(["+I"] * len(li), table[OP].type)  # typed also without pairs
    for c in (EMIT_TS, ROWNUM, *spec.carried):  # of the left row, else of the right one
        out[c] = pc.coalesce(lrows[c], rrows[c])
    joined = pa.table(out)
    marks = table.filter(pa.array(~data))
    marks = pa.table({c: marks[c] for c in joined.column_names})
    yield from pa.concat_tables([joined, marks]).to_batches()


Passes = Callable[[np.ndarray, np.ndarray], np.ndarray]


def pair_test(spec, left: Callable[[str], np.ndarray],
              right: Callable[[str], np.ndarray]) -> Passes | None:
    """A join's residual condition (``spec.residual`` over the columns, ``spec.left`` the left
    side's) as ``passes(left rows, right rows) -> TRUE mask`` over candidate pairs;
    ``left(column)`` / ``right(column)``: a side's values. None without one."""
    if spec.residual is None:
        return None
    cond = spec.residual

    def passes(li: np.ndarray, ri: np.ndarray) -> np.ndarray:
        value, known = truth(cond, lambda c: left(c)[li] if c in spec.left else right(c)[ri])
        return value & known
    return passes


def late_markers(gone: pd.DataFrame, late_tags: tuple[int, int], cols) -> pd.DataFrame | None:
    """LATE markers (``cols`` NULL) for late rows of either side of a two-input join, each
    with its side's table tag (plan.late_tag) in ``tw__ts``."""
    tags = np.array(late_tags)[gone[SIDE].to_numpy(dtype=np.int64)]
    return marker_rows(cols, ((LATE, gone[ROWNUM].to_numpy(dtype=np.int64), tags),))


def side_columns(block: Block | None, cols, picked: np.ndarray, integral
                 ) -> dict[str, pd.Series]:
    """A join side's output columns: row ``picked[i]`` of ``block``, NULLs where it is -1
    (or the side has no rows); integer columns as nullable integers."""
    out = {}
    for c in cols:
        if block is None or not len(block[c]):
            out[c] = pd.Series([None] * len(picked), dtype=object)
            continue
        values = pd.Series(block[c][np.maximum(picked, 0)],
                           dtype="Int64" if c in integral else None)
        out[c] = values.where(picked >= 0)
    return out


def _pairs(left: pd.DataFrame, right: pd.DataFrame, kind: str, passes: Passes | None = None
           ) -> tuple[np.ndarray, np.ndarray]:
    """(left row, right row) index pairs of the join, -1 for the NULL-padded side, in the
    order of the left rows, then of the right ones (SEMI, ANTI: the left rows kept, and -1s).
    ``passes``: the residual condition over candidate pairs."""
    lnull, rnull = left.isna().any(axis=1).to_numpy(), right.isna().any(axis=1).to_numpy()
    keys = list(left.columns)
    lk = left[~lnull].assign(tw__l=np.flatnonzero(~lnull))
    rk = right[~rnull].assign(tw__r=np.flatnonzero(~rnull))
    m = lk.merge(rk, on=keys, how="inner", sort=False)
    li, ri = m["tw__l"].to_numpy(dtype=np.int64), m["tw__r"].to_numpy(dtype=np.int64)
    if passes is not None and len(li):
        ok = passes(li, ri)
        li, ri = li[ok], ri[ok]
    if kind in ("SEMI", "ANTI"):
        matched = np.zeros(len(left), bool)
        matched[li] = True
        kept = np.flatnonzero(matched if kind == "SEMI" else ~matched)
        return kept, np.full(len(kept), -1)
    if kind in ("LEFT", "FULL"):  # rows without a match (a NULL key matches nothing)
        alone = np.setdiff1d(np.arange(len(left)), li)
        li, ri = np.concatenate((li, alone)), np.concatenate((ri, np.full(len(alone), -1)))
    order = np.lexsort((ri, li))
    li, ri = li[order], ri[order]
    if kind in ("RIGHT", "FULL"):
        alone = np.setdiff1d(np.arange(len(right)), ri)
        li, ri = np.concatenate((li, np.full(len(alone), -1))), np.concatenate((ri, alone))
    return li, ri


class WindowRowsJoinProcessor(BufferedRows):
    """Input: the union of both sides' rows (``spec`` columns, the side, the window in epoch
    ms), grouped by bucket of the equality keys. ``late_tags``: per side, the ``tw__ts`` of its
    LATE markers (plan.late_tag of its table)."""

    def __init__(self, spec: WindowJoinSpec, late_tags: tuple[int, int]):
        self.spec = spec
        self.late_tags = late_tags
        self.kept = (*spec.keys, *spec.left, *spec.right, SIDE, WS, WE, ROWNUM)

    def _on_time(self, df: pd.DataFrame, wm: int) -> np.ndarray:
        return df[WE].to_numpy(dtype=np.int64) - 1 > wm

    def _late(self, gone: pd.DataFrame) -> pd.DataFrame | None:
        return late_markers(gone, self.late_tags, self.spec.output)

    def _output(self, sel: Block) -> pd.DataFrame:
        side = sel[SIDE].astype(np.int64)
        left, right = np.flatnonzero(side == 0), np.flatnonzero(side == 1)
        keys = list(self.spec.keys)
        li, ri = _pairs(pd.DataFrame({k: sel[k][left] for k in keys}),
                        pd.DataFrame({k: sel[k][right] for k in keys}), self.spec.kind,
                        pair_test(self.spec, lambda c: sel[c][left], lambda c: sel[c][right]))
        rows = np.where(li >= 0, left[np.maximum(li, 0)] if len(left) else 0,
                        right[np.maximum(ri, 0)] if len(right) else 0)
        out: dict[str, object] = {}
        for cols, picked, index in ((self.spec.left, li, left), (self.spec.right, ri, right)):
            at = np.where(picked >= 0, index[np.maximum(picked, 0)], -1) if len(index) else \
                np.full(len(picked), -1)
            out.update(side_columns(sel, [c for c in cols if c in self.spec.output], at,
                                    self.spec.integral))
        out[OP] = np.full(len(li), "+I", dtype=object)
        out[EMIT_TS] = sel[WE][rows].astype(np.int64) - 1
        out[ROWNUM] = sel[ROWNUM][rows].astype(np.int64)
        return pd.DataFrame(out)
