"""TopN (``Rank``) as a transformWithState processor over buckets of partitions.

Implements ``ROW_NUMBER() | RANK() | DENSE_RANK() OVER (PARTITION BY p ORDER BY k..)`` kept to
the ranks ``start..end``, record by record as Flink's TopN operators do (AppendOnlyTopNFunction,
RetractableTopNFunction), so that one input row per micro-batch gives Flink's changelog exactly:

- Order: the ORDER BY keys (ASC NULLS FIRST / DESC NULLS LAST unless written), then arrival
  (``tw__rownum``; an updated aggregate row arrives anew, as in Flink). Dedup keep-last (ORDER BY
  a time attribute DESC, rank 1) lets the later of two equal times win.
- After each input row the visible ranks are compared before and after:
  * ROW_NUMBER with the rank number read above, or a range not starting at 1, or rank 1 only:
    per changed position ascending, ``-U`` old + ``+U`` new, ``+I`` for a position that was
    empty, ``-D`` for one that empties (rows without the number still come as -U/+U pairs);
  * ROW_NUMBER ``rownum <= N`` (N > 1) without the number: ``-D`` for the rows that left, then
    ``+I`` for the rows that entered;
  * RANK, DENSE_RANK (Flink 2.3 streaming rejects them; twinflow runs them): ``-D`` for rows
    (with their rank) that left or changed rank, then ``+I`` for the new ones.
- Retractions (-U/-D from an aggregate or join) remove the matching row first (per key, within a
  micro-batch), then additions are applied in arrival order.
- Update-fast (Flink's UpdatableTopNFunction), for ROW_NUMBER over an input with a unique key
  whose ORDER BY keys only move up the ranking (COUNT or MAX under DESC, MIN under ASC, of an
  aggregate over append-only input; rank_stream.update_fast): ``-U`` input rows are skipped, and an
  update replaces its row in place. A row that was ranked stays ranked: ``-U`` old / ``+U`` new
  (without the rank number too); one that enters pushes the last row out: ``-D`` it, ``+I``
  the new one; with the rank number, changed positions as above.
- Rows without the rank number carry NULL in the rank column.

Multi-row micro-batches of an append-only ROW_NUMBER input: before the operator (and before
the shuffle to it) ``keep_batch_top`` drops each Arrow batch's rows that rank below ``end``
among that batch's own rows of their partition: at least ``end`` rows of the same micro-batch
sort before them, so after the micro-batch they can never rank; record by record they could
only have entered and left within it (``+I``/``-D`` churn, which the net result of the
micro-batch does not show). One row per micro-batch is untouched: Flink's changelog exactly.

State per partition (a row of its slot page, rows.SlotState): the ordered rows, each with its
place among equal rows (its arrival; the sort key is computed again from the row when read).
An append-only or update-fast input keeps only the rows that can still rank (ROW_NUMBER:
``end`` rows; RANK / DENSE_RANK: ranks <= ``end``); a retracting input keeps every row (a
retraction may pull a lower row back up), as Flink does.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa

from operators_lib.changelog import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE
from operators_lib.plan import OP, ROWNUM, SortKey
from operators_lib.stream.protocol import markers
from operators_lib.stream.rows import ChangelogProcessor, Changes, KeyRows
from operators_lib.stream.state_view import KIND_TYPES

_CHUNK = 256  # rows per threshold check (_chunks)


@dataclass(frozen=True)
class TopNSpec:
    cols: tuple[str, ...]  # input columns (the output: these, then the rank)
    kinds: tuple[str, ...]  # rows.value_kind per input column
    order: tuple[SortKey, ...]  # ``col`` = a name in ``cols``
    func: str
    start: int
    end: int
    rank_output: bool
    retracting: bool  # the input has retractions: keep every row
    latest_first: bool = False  # dedup keep-last: of equal times, the later row wins
    row_key: tuple[int, ...] | None = None  # update-fast: the unique key's positions in cols


class _Desc:
    """A value ordered in reverse (DESC on a non-numeric column)."""

    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v

    def __lt__(self, other: _Desc) -> bool:
        return other.v < self.v

    def __eq__(self, other) -> bool:
        return isinstance(other, _Desc) and self.v == other.v


def _sort_value(v, key: SortKey, numeric: bool) -> tuple:
    if v is None:
        return (0 if key.nulls_first else 2, 0)
    if key.desc:
        return (1, -v if numeric else _Desc(v))
    return (1, v)


class TopNProcessor(ChangelogProcessor):
    name = "topn"

    def __init__(self, spec: TopNSpec, key_cols: list[str], rank_col: str):
        super().__init__(key_cols, None)
        self.spec = spec
        self.cols = [*spec.cols, rank_col]
        # A partition's rows in a slot page: each one's place among equal rows, its columns.
        self.value_names = ["tie", *(f"c{j}" for j in range(len(spec.cols)))]
        self.page_types = {"tie": pa.list_(pa.int64()),
                           **{f"c{j}": pa.list_(KIND_TYPES[kind])
                              for j, kind in enumerate(spec.kinds) if kind in KIND_TYPES}}
        index = {c: i for i, c in enumerate(spec.cols)}
        self.order = [(index[k.col], k, spec.kinds[index[k.col]] in ("int", "float"))
                      for k in spec.order]
        self.sign = -1 if spec.latest_first else 1
        self.positional = spec.func == "ROW_NUMBER" and (
            spec.rank_output or spec.start > 1 or spec.end == 1)
        # (column position, sort key) when rows can be skipped by a threshold (_chunks)
        self.threshold_col = self.order[0][:2] if (
            not spec.retracting and spec.func == "ROW_NUMBER" and not spec.latest_first
            and len(self.order) == 1 and self.order[0][2]) else None

    def _key(self, row: tuple, rownum: int) -> tuple:
        return self._sorted(row), self.sign * rownum

    def _sorted(self, row: tuple) -> tuple:
        return tuple(_sort_value(row[i], k, num) for i, k, num in self.order)

    def value_row(self, entries: list[tuple]) -> tuple:
        return ([k[1] for k, _ in entries], *map(list, zip(*(row for _, row in entries))))

    def value_of(self, row: tuple) -> list[tuple]:
        return [((self._sorted(r), tie), r) for tie, r in zip(row[0], zip(*row[1:]))]

    def process(self, key: tuple, data: KeyRows, stored, changes: Changes):
        entries: list[tuple] = stored or []  # (sort key, row), in rank order
        for chunk in self._chunks(data, entries):
            self._process(data, chunk, entries, changes)
        return entries or None

    def _chunks(self, data: KeyRows, entries: list[tuple]) -> Iterator[list[int]]:
        """Positions (in ``data``'s order) of the rows to process, a chunk at a time. An
        append-only ROW_NUMBER on one numeric key skips, before any per-row work, the rows
        that sort after the current last kept row: they can never rank (the kept rows only
        get better), so they change nothing and emit nothing, as record by record."""
        if self.threshold_col is None or len(data) <= _CHUNK:
            yield list(range(len(data)))
            return
        idx, key = self.threshold_col
        values = data.array(self.spec.cols[idx]).astype(float)
        scores = _scores(values, key)
        for start in range(0, len(scores), _CHUNK):
            chunk = scores[start:start + _CHUNK]
            if len(entries) >= self.spec.end:
                last = entries[self.spec.end - 1][1][idx]
                bound = _scores(np.array([np.nan if last is None else last], float), key)[0]
                # <=: floats round large integers (never reversing their order); exact
                # ties, arriving later, are dropped by the per-row check
                picked = np.flatnonzero(chunk <= bound)
            else:
                picked = np.arange(len(chunk))
            if len(picked):
                yield (picked + start).tolist()

    def _process(self, data: KeyRows, at: list[int], entries: list[tuple],
                 changes: Changes) -> None:
        spec = self.spec
        rows = data.rows(spec.cols, spec.kinds, at)
        rownums = data.values(ROWNUM)
        ops = data.values(OP) if spec.row_key is not None else None
        for row, j in zip(rows, at):
            add, i = data.adds[j], data.order[j]
            if ops is not None and ops[i] != DELETE:
                if add:
                    self._update_fast(entries, row, int(rownums[i]), changes)
                continue  # -U: the +U that follows replaces the row
            if add:
                k = self._key(row, int(rownums[i]))
                at = bisect_right(entries, k, key=lambda e: e[0])
                if not spec.retracting and spec.func == "ROW_NUMBER" and at >= spec.end:
                    continue  # below the last rank kept: it can never rank
                before = self._visible(entries)
                entries.insert(at, (k, row))
            else:
                before = self._visible(entries)
                if not self._remove(entries, row, int(rownums[i])):
                    continue
            after = self._visible(entries)
            self._emit(before, after, changes)
            if not spec.retracting:
                del entries[self._kept(entries):]

    def _update_fast(self, entries: list[tuple], row: tuple, rownum: int,
                     changes: Changes) -> None:
        """An insert or update of the row with ``row``'s unique key (see the docstring)."""
        rk = [row[j] for j in self.spec.row_key]
        old = next((n for n, (_, r) in enumerate(entries)
                    if [r[j] for j in self.spec.row_key] == rk), None)
        k = self._key(row, rownum)
        if old is not None and entries[old][0][0] == k[0]:
            k = entries[old][0]  # same sort key: the row keeps its place among its peers
        at = bisect_right(entries, k, key=lambda e: e[0])
        if old is None and at >= self.spec.end:
            return  # below the last rank: it can never rank (its order only moves up)
        before = self._visible(entries)
        if old is not None:
            del entries[old]
            at = bisect_right(entries, k, key=lambda e: e[0])
        entries.insert(at, (k, row))
        after = self._visible(entries)
        del entries[self._kept(entries):]
        if old is None:
            self._emit(before, after, changes)
        elif not self.positional:
            was = next(v for v in before if v[1] == old + 1)
            now = next(v for v in after if v[1] == at + 1)
            changes.emit([was[0], now[0]], [UPDATE_BEFORE, UPDATE_AFTER], [was[2], now[2]])
        else:
            self._emit_move(before, after, old + 1, at + 1, changes)

    @staticmethod
    def _emit_move(before: list[tuple], after: list[tuple], old_rank: int, new_rank: int,
                   changes: Changes) -> None:
        """Flink's update-fast order for a row that moved up from ``old_rank`` to
        ``new_rank``: the row at the new rank and the moved row's old record are retracted
        first, then each rank down to the old one gets its new row (``-U`` the row it held,
        ``+U`` the new one); a row that kept its rank is ``-U`` old / ``+U`` new."""
        old = {r: (row, n) for row, r, n in before}
        new = {r: (row, n) for row, r, n in after}
        rows, ops, nums = [], [], []

        def put(entry, op):
            if entry is not None:
                rows.append(entry[0])
                ops.append(op)
                nums.append(entry[1])

        for r in range(new_rank, old_rank + 1):
            if r == new_rank and r != old_rank:
                put(old.get(r), UPDATE_BEFORE)
                put(old.get(old_rank), UPDATE_BEFORE)
            elif r != old_rank or r == new_rank:
                put(old.get(r), UPDATE_BEFORE)
            put(new.get(r), UPDATE_AFTER)
        changes.emit(rows, ops, nums)

    def _remove(self, entries: list[tuple], row: tuple, rownum: int) -> bool:
        """Remove ``row`` (preferring the copy that arrived as ``rownum``)."""
        k = self._key(row, rownum)
        at = bisect_right(entries, k, key=lambda e: e[0]) - 1
        if 0 <= at < len(entries) and entries[at] == (k, row):
            del entries[at]
            return True
        for j in range(len(entries) - 1, -1, -1):
            if entries[j][1] == row:
                del entries[j]
                return True
        return False  # never stored (an append-only TopN dropped it, or its state expired)

    def _ranks(self, entries: list[tuple], limit: int) -> list[int]:
        """Rank of each leading entry while the rank is <= ``limit``."""
        func, out, prev, rank = self.spec.func, [], None, 0
        for n, (k, _) in enumerate(entries):
            if func == "ROW_NUMBER":
                rank = n + 1
            elif k[0] != prev:
                rank = n + 1 if func == "RANK" else rank + 1
            prev = k[0]
            if rank > limit:
                break
            out.append(rank)
        return out

    def _kept(self, entries: list[tuple]) -> int:
        if self.spec.func == "ROW_NUMBER":
            return self.spec.end
        return len(self._ranks(entries, self.spec.end))

    def _visible(self, entries: list[tuple]) -> list[tuple]:
        """(rank, output row, its arrival) of the ranks start..end."""
        spec = self.spec
        ranks = self._ranks(entries, spec.end)
        return [((*row, r if spec.rank_output else None), r, self.sign * k[1])
                for r, (k, row) in zip(ranks, entries) if r >= spec.start]

    def _emit(self, before: list[tuple], after: list[tuple], changes: Changes) -> None:
        if self.positional:
            old = {r: (row, n) for row, r, n in before}
            new = {r: (row, n) for row, r, n in after}
            for r in sorted(set(old) | set(new)):
                a, b = old.get(r), new.get(r)
                if a == b:
                    continue
                if a is not None and b is not None:
                    changes.emit([a[0], b[0]], [UPDATE_BEFORE, UPDATE_AFTER], [a[1], b[1]])
                elif b is not None:
                    changes.emit([b[0]], [INSERT], [b[1]])
                else:
                    changes.emit([a[0]], [DELETE], [a[1]])
            return
        old = [(row, n) for row, _, n in before]
        new = [(row, n) for row, _, n in after]
        left = _taken(old, Counter(old) - Counter(new))
        entered = _taken(new, Counter(new) - Counter(old))
        changes.emit([r for r, _ in left + entered],
                     [DELETE] * len(left) + [INSERT] * len(entered),
                     [n for _, n in left + entered])


def keep_batch_top(batches: Iterator[pa.RecordBatch], partition: list[str],
                   order: list[SortKey], end: int) -> Iterator[pa.RecordBatch]:
    """Each batch's rows that rank within ``end`` among the batch's rows of their partition
    (ties by arrival), in input order, and its end-of-input markers (see the docstring)."""
    for batch in batches:
        if batch.num_rows <= end:
            yield batch
            continue
        df = batch.select([*partition, *(k.col for k in order), ROWNUM]).to_pandas()
        keys = pd.DataFrame({f"p{i}": df[p] for i, p in enumerate(partition)})
        by, ascending = [], []
        for i, k in enumerate(order):
            keys[f"n{i}"], keys[f"v{i}"] = df[k.col].isna(), df[k.col]
            by += [f"n{i}", f"v{i}"]
            ascending += [not k.nulls_first, not k.desc]
        keys["r"] = df[ROWNUM]
        ranked = keys.sort_values([*by, "r"], ascending=[*ascending, True], kind="stable")
        top = ranked.groupby(list(keys.columns[:len(partition)]), dropna=False,
                             sort=False).head(end) if partition else ranked.head(end)
        marker = ~markers(df[ROWNUM].to_numpy()).data
        keep = np.union1d(top.index.to_numpy(), np.flatnonzero(marker))
        yield batch.take(pa.array(keep))


def _scores(values: np.ndarray, key: SortKey) -> np.ndarray:
    """Numeric sort values as scores, lower = ranked first (NULL as NaN: first or last)."""
    scores = -values if key.desc else values.copy()
    scores[np.isnan(values)] = -np.inf if key.nulls_first else np.inf
    return scores


def _taken(rows: list[tuple], wanted: Counter) -> list[tuple]:
    """The rows counted in ``wanted``, in the order of ``rows``."""
    out = []
    for r in rows:
        if wanted[r] > 0:
            wanted[r] -= 1
            out.append(r)
    return out
