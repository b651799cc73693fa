"""Window TopN: ``ROW_NUMBER() | RANK() | DENSE_RANK() OVER (PARTITION BY window_start,
window_end [, keys] ORDER BY ..)`` kept to ranks ``start..end``, over a window aggregate or a
window TVF's rows; window deduplication (ROW_NUMBER ordered by a time attribute, rank 1).

Changelog rules (Flink's WindowRank / WindowDeduplicate): a window's rows are ranked once, when
the window fires, and the rows within the ranks are emitted as ``+I``, in rank order, never
updated or retracted. Rows of equal ORDER BY values: ROW_NUMBER ranks them by arrival (the
window aggregate's row arrives with its first input row; deduplication keeping the last row:
the later first), RANK / DENSE_RANK give them one rank.

Over a window aggregate every row of a window arrives in the micro-batch in which the window
fires (the watermark fires all of them at once), so the ranking is stateless
(``rank_windows``): the micro-batch is hash-partitioned by the partition columns and each task
ranks its rows with pandas, across all its windows at once. Marker rows (late rows upstream)
pass through unchanged.

Over a window TVF's rows (one row per window, ``WindowRows``) the rows wait in state until
their window fires (``WindowRowsRankProcessor``, a bucket's pending pairs as in
stream/window_agg.py). A row is late, dropped from all its windows and reported, when the
first of its windows has fired when it arrives (Flink assigns it by its first slice: a HOP row
whose earliest window has fired is dropped from the later ones too, tests/cases/windows/
window_topn_tvf).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from operators_lib.plan import EMIT_TS, LATE, OP, ROWNUM, SortKey
from operators_lib.stream.event_time import Block
from operators_lib.stream.window_agg import WE, WS, BufferedRows, marker_rows


@dataclass(frozen=True)
class WindowRankSpec:
    partition: tuple[str, ...]  # input columns (with the window bounds; the harness's batch)
    order: tuple[SortKey, ...]
    func: str  # ROW_NUMBER | RANK | DENSE_RANK
    start: int
    end: int
    rank_col: str  # the output column of the rank number
    latest_first: bool = False  # ties by arrival, the later first (deduplication keeping last)


def task_rows(batches: Iterator[pa.RecordBatch]) -> tuple[pa.Table | None, np.ndarray]:
    """A ``mapInArrow`` task's rows as one table (None: no rows), and which are data rows
    (``+I``; the others are markers of late rows upstream)."""
    tables = [pa.Table.from_batches([b]) for b in batches if b.num_rows]
    if not tables:
        return None, np.zeros(0, bool)
    table = pa.concat_tables(tables)
    return table, pc.equal(table[OP], "+I").to_numpy(zero_copy_only=False)


def rank_windows(batches: Iterator[pa.RecordBatch], spec: WindowRankSpec
                 ) -> Iterator[pa.RecordBatch]:
    """One task's rows of a micro-batch (whole partitions), ranked; see the module docstring."""
    table, is_data = task_rows(batches)
    if table is None:
        return
    data = np.flatnonzero(is_data)
    cols = [*spec.partition, *(k.col for k in spec.order), ROWNUM]
    take, rank, position = _ranked(table.select(cols).take(pa.array(data)).to_pandas(), spec)
    ranked = table.take(pa.array(data[take]))
    ranked = ranked.set_column(ranked.schema.get_field_index(ROWNUM), ROWNUM,
                               pa.array(position + 1, pa.int64()))  # the sink orders by it
    ranked = ranked.append_column(spec.rank_col, pa.array(rank, pa.int64()))
    marks = table.take(pa.array(np.flatnonzero(~is_data)))
    marks = marks.append_column(spec.rank_col, pa.nulls(marks.num_rows, pa.int64()))
    yield from pa.concat_tables([ranked, marks]).to_batches()


def _ranked(df: pd.DataFrame, spec: WindowRankSpec
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows within the ranks, in rank order per partition: (their index in ``df``, their
    rank, their 0-based row number in the partition)."""
    keys = pd.DataFrame({f"p{i}": df[p] for i, p in enumerate(spec.partition)}, index=df.index)
    by, ascending = list(keys.columns), [True] * len(keys.columns)
    for i, k in enumerate(spec.order):
        keys[f"n{i}"], keys[f"v{i}"] = df[k.col].isna(), df[k.col]
        by += [f"n{i}", f"v{i}"]
        ascending += [not k.nulls_first, not k.desc]
    keys["r"] = df[ROWNUM]
    order = keys.sort_values([*by, "r"], ascending=[*ascending, not spec.latest_first],
                             kind="stable",
                             na_position="last").index.to_numpy()
    keys = keys.loc[order].reset_index(drop=True)
    n = len(keys)
    group = np.zeros(n, bool)
    group[:1] = True
    for c in keys.columns[:len(spec.partition)]:
        group[1:] |= _changed(keys[c].to_numpy())
    peer = group.copy()
    for i in range(len(spec.order)):
        peer[1:] |= _changed(keys[f"v{i}"].to_numpy())
    first = np.maximum.accumulate(np.where(group, np.arange(n), 0))
    position = np.arange(n) - first
    if spec.func == "ROW_NUMBER":
        rank = position + 1
    elif spec.func == "RANK":
        rank = np.maximum.accumulate(np.where(peer, np.arange(n), 0)) - first + 1
    else:  # DENSE_RANK
        peers = np.cumsum(peer)
        rank = peers - peers[first] + 1
    keep = (rank >= spec.start) & (rank <= spec.end)
    return order[keep], rank[keep], position[keep]


def _changed(values: np.ndarray) -> np.ndarray:
    """Does each value (from the second on) differ from the one before? NULLs are equal."""
    a, b = values[1:], values[:-1]
    null_a, null_b = pd.isna(a), pd.isna(b)
    with np.errstate(invalid="ignore"):
        differ = np.asarray(a != b, dtype=bool)
    return np.where(null_a | null_b, null_a != null_b, differ)


class WindowRowsRankProcessor(BufferedRows):
    """Window TopN over a window TVF's rows: input columns ``columns`` (the rows, with their
    window bounds as text), ``tw__ws`` / ``tw__we`` (the window in epoch ms), the row number;
    grouped by bucket of the partition's other columns."""

    def __init__(self, spec: WindowRankSpec, columns: tuple[str, ...], late_tag: int):
        self.spec = spec
        self.columns = columns
        self.kept = (*columns, WS, WE, ROWNUM)
        self.late_tag = late_tag  # the tw__ts of LATE markers (plan.late_tag)

    def _on_time(self, df: pd.DataFrame, wm: int) -> np.ndarray:
        """A row is late for all its windows once its first window has fired (Flink's
        slices)."""
        first_end = df.groupby(ROWNUM)[WE].transform("min").to_numpy(dtype=np.int64)
        return first_end - 1 > wm

    def _late(self, gone: pd.DataFrame) -> pd.DataFrame | None:
        rownum = np.unique(gone[ROWNUM].to_numpy(dtype=np.int64))
        return marker_rows((*self.columns, self.spec.rank_col),
                           ((LATE, rownum, np.full(len(rownum), self.late_tag)),))

    def _output(self, sel: Block) -> pd.DataFrame:
        df = pd.DataFrame(sel)
        take, rank, position = _ranked(df, self.spec)
        out = df.loc[take, list(self.columns)].reset_index(drop=True)
        out[self.spec.rank_col] = rank
        out[OP] = "+I"
        out[EMIT_TS] = df[WE].to_numpy(dtype=np.int64)[take] - 1
        out[ROWNUM] = position + 1  # the sink orders a window's rows by it: rank order
        return out
