"""Window TopN: ``ROW_NUMBER() | RANK() | DENSE_RANK() OVER (PARTITION BY window_start,
window_end [, keys] ORDER BY ..)`` kept to ranks ``start..end``, over a window aggregate.

Changelog rules (Flink's WindowRank over a window aggregate): a window's rows are ranked once,
when the window fires, and the rows within the ranks are emitted as ``+I``, in rank order,
never updated or retracted. Rows of equal ORDER BY values: ROW_NUMBER ranks them by arrival
(the window aggregate's row arrives with its first input row), RANK / DENSE_RANK give them one
rank.

Runtime: every row of a window reaches this operator in the micro-batch in which the window
fires (the watermark fires all of them at once), so the ranking is stateless: the micro-batch
is hash-partitioned by the partition columns and each task ranks its rows with pandas, across
all its windows at once. Marker rows (late rows upstream) pass through unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from operators_lib.plan import OP, ROWNUM, SortKey


@dataclass(frozen=True)
class WindowRankSpec:
    partition: tuple[str, ...]  # input columns (with the window bounds; the harness's batch)
    order: tuple[SortKey, ...]
    func: str  # ROW_NUMBER | RANK | DENSE_RANK
    start: int
    end: int
    rank_col: str  # the output column of the rank number


def rank_windows(batches: Iterator[pa.RecordBatch], spec: WindowRankSpec
                 ) -> Iterator[pa.RecordBatch]:
    """One task's rows of a micro-batch (whole partitions), ranked; see the module docstring."""
    tables = [pa.Table.from_batches([b]) for b in batches if b.num_rows]
    if not tables:
        return
    table = pa.concat_tables(tables)
    is_data = pc.equal(table[OP], "+I").to_numpy(zero_copy_only=False)
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
    order = keys.sort_values([*by, "r"], ascending=[*ascending, True], kind="stable",
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
