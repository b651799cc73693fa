"""Regular (unbounded) join as a transformWithState processor over buckets of join keys,
vectorized across keys.

Implements ``left [INNER | LEFT | RIGHT | FULL] JOIN right ON left.k = right.k AND residual``
over inputs that may themselves be changelogs, following Flink's StreamingJoinOperator.

Changelog rules, per input record (ACC = +I/+U, RETRACT = -U/-D; "outer" = the side whose
unmatched rows are kept, null-padded):
- ACC on side S: matches = the other side's stored records passing the residual condition.
  No match: if S is outer, emit +[record + nulls]. Matches: if the other side is outer, every
  match that had no partner so far has its null-padded row retracted (-[nulls + other]); then
  +[record, other] for every match. Store the record with its number of matches.
- RETRACT on side S: remove the record; no match: if S is outer, -[record + nulls]; matches:
  -[record, other] for every match, and if the other side is outer, a match losing its last
  partner gets its null-padded row back (+[nulls + other]).
- SEMI / ANTI (Flink's StreamingSemiAntiJoinOperator): only left rows are emitted. A left
  record is visible while it has a match (SEMI) / none (ANTI); a right record arriving gives
  its matches their first partner (SEMI: +left, ANTI: -left) and one retracted takes away
  their last (SEMI: -left, ANTI: +left).
- A NULL in a join key never matches: such a row is emitted null-padded (outer side) or
  dropped (inner side), and never stored.
- Per micro-batch only the net change is emitted: retractions as -D, then additions as +I (a
  row added and retracted within one micro-batch is not emitted at all). With one input row
  per micro-batch this is exactly Flink's changelog, up to the order of the rows of one step.

How a micro-batch's net change is computed at once for all keys of a bucket (retractions
refer to rows emitted in earlier micro-batches: stream/rows.py), exactly what the rules above
give row by row with retractions first (tests/test_join_processor.py checks it against the
join's definition on random changelogs):
- pairs: (new left rows x all right records) + (stored left records x new right rows), each
  weighted by the product of the two sides' signed multiplicities (a stored record: its
  copies; a new row: +1 adds, -1 retracts), that is ``J(after) - J(before)`` of the pairs;
- match counts: a stored record's count moves by the signed new rows of the other side that
  match it; a new record starts with the copies it matches in the other side after the
  micro-batch's retractions, plus the rows added there (a record stored before them would
  have counted them as they came);
- null-padded rows (outer sides) and visible left rows (SEMI, ANTI): a retracted row takes
  back what it showed alone, judged by what it matches among the records stored before (as
  Flink judges it on arrival); the rest is what the records show alone after the micro-batch
  less what they showed after its retractions;
- all of it summed per output row; what remains is emitted, retractions first.
With state TTL a retraction may find its record already dropped: it still retracts its pairs
with the records stored before (as Flink does), but pairs with no row added in the same
micro-batch; where it and a stored partner's retraction arrive together, the partner's is
taken first (Flink's result there depends on which arrives first).

State TTL (``table.exec.state.ttl``, Flink's meaning): every stored record keeps the time it
was last written (added, copies or match count changed); when its key is next touched (or a
state sweep passes, rows.py), records idle longer than the TTL are dropped first, so later
rows no longer see them (results emitted earlier stay), and a ``TTL`` marker row with the key
is emitted for the parity report. The clock is the micro-batch's processing time
(``current_timestamp()``): no timers, so scheduled ``availableNow`` runs terminate.

Which records are one stored record, chosen from the side's unique key (as Flink's
JoinRecordStateViews): JoinKeyContainsUniqueKey: one per join key; InputSideHasUniqueKey: one
per unique key; InputSideHasNoUniqueKey: one per distinct row, with its number of copies. An
added record replaces a stored one of the same unique key (upstream state expired), and a
retraction removes it. Each stored record carries its number of matches (used by outer sides
and SEMI/ANTI).

Runtime: grouped by bucket (a hash of the join key), rows in and out as Arrow
(stream/packing.py). State per bucket: one page (stream/state_view.py: Arrow tables) with each
side's records: key columns, the side's columns, copies, matches, the TTL clock of their last
write.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from operators_lib.changelog import ADDS, DELETE, INSERT
from operators_lib.plan import EMIT_TS, OP, ROWNUM, TTL, Cond
from operators_lib.stream import packing
from operators_lib.stream.calc import truth
from operators_lib.stream.protocol import Processor, markers
from operators_lib.stream.rows import (
    NOW,
    WRITTEN,
    combined_codes,
    marker_output,
    sweep_output,
)

SIDE = "tw__side"  # 0 = left input, 1 = right input
LAYOUTS = ("join_key_contains_unique_key", "input_has_unique_key", "no_unique_key")
_COPIES, _MATCHES = "tw__copies", "tw__matches"


@dataclass(frozen=True)
class SideSpec:
    cols: tuple[str, ...]  # the side's columns in the processor's input (and output)
    names: tuple[str, ...]  # their names in the plan (the residual condition's)
    outer: bool
    layout: str  # one of LAYOUTS
    unique: tuple[int, ...]  # positions of the unique key in a row (input_has_unique_key)
    key_pos: tuple[int, ...] = ()  # positions of the join key columns in a row


@dataclass(frozen=True)
class JoinSpec:
    kind: str  # INNER, LEFT, RIGHT, FULL, SEMI, ANTI
    left: SideSpec
    right: SideSpec
    residual: Cond | None
    ttl_ms: int | None = None

    @property
    def semi_anti(self) -> bool:
        return self.kind in ("SEMI", "ANTI")


def codes(columns: list[pa.ChunkedArray | pa.Array], n: int) -> np.ndarray:
    """A dense code per distinct combination of values over ``n`` rows (NULL is a value),
    in Arrow: exact for every type (no float64 detour for large integers)."""
    encoded = (pc.dictionary_encode(  # one dictionary for all rows
        col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col,
        null_encoding="encode") for col in columns)
    return combined_codes(((enc.indices.to_numpy(zero_copy_only=False), len(enc.dictionary))
                           for enc in encoded), n).astype(np.int64, copy=False)


def _stacked(tables: list[pa.Table], column: str) -> pa.ChunkedArray:
    return pa.chunked_array([c for t in tables for c in t.column(column).chunks],
                            tables[0].schema.field(column).type)


def pairs(lc: np.ndarray, rc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (i, j) with ``lc[i] == rc[j]``, grouped by i."""
    order = np.argsort(rc, kind="stable")
    ranked = rc[order]
    lo, hi = np.searchsorted(ranked, lc, "left"), np.searchsorted(ranked, lc, "right")
    count = hi - lo
    li = np.repeat(np.arange(len(lc)), count)
    starts = np.repeat(lo - np.cumsum(count) + count, count)
    return li, order[starts + np.arange(len(li), dtype=np.int64)]


def _scatter(size: int, at: np.ndarray, weights: np.ndarray) -> np.ndarray:
    return np.bincount(at, weights=weights, minlength=size).astype(np.int64) if len(at) else \
        np.zeros(size, np.int64)


class _Side:
    """One side's records in a micro-batch: the stored ones (rows 0..n-1) and the new rows
    (n..n+m-1), the side's key and own columns as one Arrow table; per row its copies and
    matches before (stored), its sign (new: +1 adds, -1 retracts), and after ``apply`` what
    the side keeps."""

    def __init__(self, stored: pa.Table | None, new: pa.Table, adds: np.ndarray,
                 columns: list[str]):
        self.n = 0 if stored is None else stored.num_rows
        self.size = self.n + new.num_rows
        self.rows = new.select(columns) if stored is None else pa.concat_tables(
            [stored.select(columns), new.select(columns)])
        self.stored = np.arange(self.size) < self.n
        self.copies, self.matches, self.written = (np.concatenate((
            np.zeros(0, np.int64) if stored is None else
            packing.column(stored, c).astype(np.int64), np.zeros(new.num_rows, np.int64)))
            for c in (_COPIES, _MATCHES, WRITTEN))
        self.sign = np.concatenate((np.zeros(self.n, np.int64), np.where(adds, 1, -1)))
        self.weight = np.where(self.stored, self.copies, self.sign)  # in the pairs' delta

    def apply(self, ident: np.ndarray, layout: str, now: int) -> None:
        """The new rows applied to the records (module docstring): ``mid`` the copies after
        the retractions (for the other side's new records to count: an added row counts one),
        ``after`` the copies kept (a new row kept is a record of its own: ``fresh``),
        ``phantom`` the retractions of records not stored (TTL dropped them)."""
        n, new = self.n, ~self.stored
        slot = np.full(self.size, -1)  # the stored record of each new row's identity
        if n and self.size > n:
            sorter = np.argsort(ident[:n])
            at = np.minimum(np.searchsorted(ident[:n], ident[n:], sorter=sorter), n - 1)
            slot[n:] = np.where(ident[:n][sorter[at]] == ident[n:], sorter[at], -1)
        retract, add = new & (self.sign < 0), new & (self.sign > 0)
        self.phantom = retract & (slot < 0)
        hits = slot[retract & (slot >= 0)]
        mid = self.copies.copy()
        mid[:n] = np.maximum(mid[:n] - np.bincount(hits, minlength=n)[:n], 0) if n else mid[:n]
        self.written[hits] = now
        after = np.where(self.stored, mid, 0)
        self.fresh = np.zeros(self.size, bool)
        adding = np.flatnonzero(add)
        if layout == LAYOUTS[2]:
            # an identical row adds a copy to a record still stored, else starts one
            target = slot[adding]
            onto = (target >= 0) & (mid[np.maximum(target, 0)] > 0)
            np.add.at(after, target[onto], 1)
            self.written[target[onto]] = now
            starting = adding[~onto]
            _, first, counts = np.unique(ident[starting], return_index=True, return_counts=True)
            heads = starting[first]
            self.fresh[heads] = True
            after[heads] = counts
            mid_new = add.astype(np.int64)
        else:
            # the last row added of a unique key replaces its stored record
            heads = adding[::-1][np.unique(ident[adding][::-1], return_index=True)[1]]
            self.fresh[heads] = True
            after[heads] = 1
            replaced = slot[heads]
            after[replaced[replaced >= 0]] = 0
            mid[replaced[replaced >= 0]] = 0
            mid_new = self.fresh.astype(np.int64)
        self.written[self.fresh] = now
        self.mid = np.where(self.stored, mid, mid_new)
        self.after = after


class JoinProcessor(Processor):
    name = "join"
    arrow = True

    def __init__(self, spec: JoinSpec, key_cols: list[str]):
        self.spec = spec
        # keying.grouping_keys: (NULL flag, value) pairs
        self.flags, self.values = key_cols[0::2], key_cols[1::2]
        self.sides = (spec.left, spec.right)
        self.cols = list(spec.left.cols if spec.semi_anti else spec.left.cols + spec.right.cols)
        # whose match counts are kept: an outer side's, the left side's of SEMI / ANTI
        self.counted = (spec.left.outer or spec.semi_anti, spec.right.outer)
        self.lnames = dict(zip(spec.left.names, spec.left.cols))
        self.rnames = dict(zip(spec.right.names, spec.right.cols))

    def handleInputRows(self, key, rows, timerValues) -> Iterator[pd.DataFrame]:
        table = packing.read(rows)
        op = (table.column(OP).to_numpy(zero_copy_only=False) if OP in table.column_names
              else np.full(table.num_rows, INSERT, dtype=object))
        kinds = markers(packing.column(table, ROWNUM), op)
        data = kinds.data
        self.schema = pa.schema([*(table.schema.field(c) for c in self.cols),
                                 pa.field(OP, pa.string()), pa.field(EMIT_TS, pa.int64()),
                                 pa.field(ROWNUM, pa.int64())])
        out = []
        if kinds.passed.any():
            out.append(self._frame(marker_output(table.filter(kinds.passed).to_pandas(),
                                                 self.cols)))
        swept = kinds.sweep is not None
        if swept:
            out.append(self._frame(sweep_output(kinds.sweep, self.cols)))
        now = (int(pc.max(table.column(NOW)).as_py()) if self.spec.ttl_ms
               and NOW in table.column_names and table.num_rows else None)
        if data.any() or (swept and now is not None):
            page = self.state.load() or {"sides": [None, None]}
            out += self._step(page, table.filter(data), np.isin(op[data], ADDS), now, swept)
            self.state.save(page if any(t is not None for t in page["sides"]) else None)
        yield from packing.frames(out)

    def _frame(self, df: pd.DataFrame) -> pa.Table:
        return pa.Table.from_pandas(df, schema=self.schema, preserve_index=False)

    # -- a micro-batch (module docstring) ---------------------------------------------------
    def _step(self, page: dict, data: pa.Table, adds: np.ndarray, now: int | None,
              sweep: bool) -> list[pa.Table]:
        null = np.zeros(data.num_rows, bool)
        for f in self.flags:
            null |= packing.column(data, f).astype(bool)
        side = packing.column(data, SIDE)
        # Only the records of the keys the micro-batch touches are worked on; the others are
        # kept as they are (a sweep expires those too).
        stored, rest = self._touched(page["sides"], data.filter(~null))
        out = []
        if now is not None:
            cutoff = now - self.spec.ttl_ms
            stored, expired = self._expire(stored, cutoff)
            if sweep:
                rest, swept = self._expire(rest, cutoff)
                expired += swept
            if expired:
                out.append(self._ttl_markers(pa.concat_tables(
                    [t.select(self.values) for t in expired])))
        sides, loose, loose_adds = [], [], []
        for s in (0, 1):
            mine, alone = ~null & (side == s), null & (side == s)
            sides.append(_Side(stored[s], data.filter(mine), adds[mine],
                               [*self.values, *self.sides[s].cols]))
            loose.append(data.filter(alone))
            loose_adds.append(adds[alone])
        left, right = sides
        keys = codes([_stacked([left.rows, right.rows], v) for v in self.values],
                     left.size + right.size)
        vals = [codes([_stacked([x.rows, loose[s]], c) for c in self.sides[s].cols],
                      x.size + loose[s].num_rows) for s, x in enumerate(sides)]
        weighted = self._changes(left, right, keys[:left.size], keys[left.size:], vals,
                                 now or 0)
        for s in (0, 1):  # rows with a NULL key: alone, on an outer side (ANTI: left rows)
            if (self.spec.kind == "ANTI" and s == 0) or (self.sides[s].outer and
                                                         not self.spec.semi_anti):
                at = sides[s].size + np.arange(loose[s].num_rows)
                weighted.append(self._alone(s, vals[s][at], np.where(loose_adds[s], 1, -1)))
        kept = [[t for t in (rest[s], self._kept(x)) if t is not None]
                for s, x in enumerate(sides)]
        page["sides"] = [pa.concat_tables(k) if k else None for k in kept]
        out.append(self._emit(weighted, [pa.concat_tables([x.rows.select(list(
            self.sides[s].cols)), loose[s].select(list(self.sides[s].cols))])
            for s, x in enumerate(sides)], vals))
        return out

    def _touched(self, stored: list, data: pa.Table) -> tuple[list, list]:
        """Each side's stored records split into those of the keys ``data`` has and the
        rest (None where there are none)."""
        tables = [t for t in stored if t is not None]
        if not tables:
            return [None, None], [None, None]
        size = sum(t.num_rows for t in tables)
        kc = codes([_stacked([*tables, data], v) for v in self.values], size + data.num_rows)
        hit, at = np.isin(kc[:size], kc[size:]), 0
        touched, rest = [], []
        for t in stored:
            if t is None:
                touched.append(None)
                rest.append(None)
                continue
            mine = hit[at:at + t.num_rows]
            at += t.num_rows
            touched.append(t.filter(pa.array(mine)) if mine.any() else None)
            rest.append(t.filter(pa.array(~mine)) if not mine.all() else None)
        return touched, rest

    @staticmethod
    def _expire(stored: list, cutoff: int) -> tuple[list, list[pa.Table]]:
        """The records written at ``cutoff`` or later, and those dropped."""
        kept, gone = [], []
        for t in stored:
            old = None if t is None else packing.column(t, WRITTEN) < cutoff
            if old is None or not old.any():
                kept.append(t)
                continue
            kept.append(t.filter(pa.array(~old)) if not old.all() else None)
            gone.append(t.filter(pa.array(old)))
        return kept, gone

    def _ttl_markers(self, gone: pa.Table) -> pa.Table:
        """A TTL marker for each key that lost records (``gone``: their key columns), the key
        in the left key columns."""
        keys = gone
        first = np.unique(codes(list(keys.columns), keys.num_rows), return_index=True)[1]
        keys, n = keys.take(pa.array(first)), len(first)
        cols = {c: pa.nulls(n, self.schema.field(c).type) for c in self.cols}
        for pos, v in zip(self.spec.left.key_pos, self.values):
            c = self.spec.left.cols[pos]
            cols[c] = keys.column(v).cast(self.schema.field(c).type)
        return pa.table({**cols, OP: pa.array([TTL] * n, pa.string()),
                         EMIT_TS: pa.array(np.zeros(n, np.int64)),
                         ROWNUM: pa.array(np.zeros(n, np.int64))}, schema=self.schema)

    def _changes(self, left: _Side, right: _Side, lk: np.ndarray, rk: np.ndarray,
                 vals: list[np.ndarray], now: int) -> list:
        """The weighted output rows of the rows with a join key, as (left value codes, right
        value codes or -1, weights); applies the new rows to the sides' records."""
        spec = self.spec
        lnew, rnew = np.flatnonzero(~left.stored), np.flatnonzero(~right.stored)
        a_l, a_r = pairs(lk[lnew], rk)  # new left rows x all right rows
        b_l, b_r = pairs(lk[:left.n], rk[rnew])  # stored left records x new right rows
        li, ri = self._passing(left, right, np.concatenate((lnew[a_l], b_l)),
                               np.concatenate((a_r, rnew[b_r])))
        out = []
        for s, x in enumerate((left, right)):
            x.apply(self._identity(x, lk if s == 0 else rk, vals[s], s), self.sides[s].layout,
                    now)
        if not spec.semi_anti:
            # Two new rows: the sign product undoes what the pairs with the stored records
            # counted. A retraction of a record not stored (TTL dropped it) pairs with no
            # added row and no other such retraction: it sees the records stored when it
            # arrives, before the micro-batch's additions.
            w = left.weight[li] * right.weight[ri]
            unseen = [x.phantom | (x.sign > 0) for x in (left, right)]
            w[(left.phantom[li] & unseen[1][ri]) | (right.phantom[ri] & unseen[0][li])] = 0
            out.append((vals[0][li], vals[1][ri], w))
        for s, (x, other, mine, theirs) in enumerate(((left, right, li, ri),
                                                      (right, left, ri, li))):
            if not self.counted[s]:
                continue
            # A retracted row: Flink emits what it showed alone by what it matches when it
            # arrives (the records stored before), whatever its record counted (TTL may have
            # dropped its partners); the rest is what the records show alone after the
            # retractions (an added row replacing a record: the old one vanishes) against
            # what they show after the whole micro-batch.
            before = _scatter(x.size, mine, np.where(other.stored, other.copies, 0)[theirs])
            retracted = np.flatnonzero((x.sign < 0) & ((before > 0) if spec.kind == "SEMI"
                                                       else (before == 0)))
            out.append(self._alone(s, vals[s][retracted], -np.ones(len(retracted), np.int64)))
            out.append(self._alone(s, vals[s][:x.size],
                                   -self._shown(x, x.stored, np.where(x.stored, x.mid, 0))))
            by_new = ~other.stored[theirs]
            moved = mine[by_new]
            x.matches += np.where(x.stored, _scatter(x.size, moved, other.sign[theirs][by_new]),
                                  0)
            x.written[np.unique(moved[x.stored[moved]])] = now
            x.matches[x.fresh] = _scatter(x.size, mine, other.mid[theirs])[x.fresh]
            out.append(self._alone(s, vals[s][:x.size], self._shown(x, x.after > 0, x.after)))
        return out

    def _shown(self, x: _Side, kept: np.ndarray, copies: np.ndarray) -> np.ndarray:
        """Copies of each record shown alone: null-padded (no match) or SEMI / ANTI's left
        rows (a match / none). A count below zero (a retraction of a partner TTL dropped)
        is none, as Flink's flips only at 0 <-> 1."""
        shown = x.matches > 0 if self.spec.kind == "SEMI" else x.matches <= 0
        return np.where(kept & shown, copies, 0)

    def _alone(self, s: int, side_codes: np.ndarray, weights: np.ndarray) -> tuple:
        none = np.full(len(side_codes), -1)
        return (side_codes, none, weights) if s == 0 else (none, side_codes, weights)

    def _identity(self, x: _Side, keys: np.ndarray, vals: np.ndarray, s: int) -> np.ndarray:
        """Which rows are one stored record (module docstring)."""
        spec = self.sides[s]
        if spec.layout == LAYOUTS[0]:
            return keys
        if spec.layout == LAYOUTS[1]:
            return codes([x.rows.column(spec.cols[i]) for i in spec.unique], x.size)
        return vals[:x.size]

    def _passing(self, left: _Side, right: _Side, li: np.ndarray, ri: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
        """The candidate pairs (equal keys) that pass the residual condition."""
        cond = self.spec.residual
        if cond is None or not len(li):
            return li, ri

        def column(name: str) -> np.ndarray:
            if name in self.lnames:
                return left.rows.column(self.lnames[name]).to_numpy(zero_copy_only=False)[li]
            return right.rows.column(self.rnames[name]).to_numpy(zero_copy_only=False)[ri]
        value, known = truth(cond, column)
        ok = value & known
        return li[ok], ri[ok]

    @staticmethod
    def _kept(x: _Side) -> pa.Table | None:
        """The side's records after the micro-batch, as they are stored (None: none)."""
        keep = np.flatnonzero(x.after > 0)
        if not len(keep):
            return None
        return x.rows.take(pa.array(keep)).append_column(
            _COPIES, pa.array(x.after[keep])).append_column(
            _MATCHES, pa.array(x.matches[keep])).append_column(
            WRITTEN, pa.array(x.written[keep]))

    def _emit(self, weighted: list, rows: list[pa.Table], vals: list[np.ndarray]) -> pa.Table:
        """The weighted rows summed per output row; what remains as -D rows, then +I rows."""
        lc = np.concatenate([w[0] for w in weighted]).astype(np.int64)
        rc = np.concatenate([w[1] for w in weighted]).astype(np.int64)
        w = np.concatenate([w[2] for w in weighted]).astype(np.int64)
        width = int(vals[1].max(initial=0)) + 2
        combined, inverse = np.unique(lc * width + rc + 1, return_inverse=True)
        total = np.bincount(inverse, weights=w, minlength=len(combined)).astype(np.int64)
        first = np.zeros(len(combined), np.int64)
        first[inverse[::-1]] = np.arange(len(lc))[::-1]
        net = np.flatnonzero(total)
        order = np.concatenate((net[total[net] < 0], net[total[net] > 0]))
        times = np.abs(total[order])
        pick = np.repeat(first[order], times)
        ops = np.repeat(np.where(total[order] < 0, DELETE, INSERT), times)
        reps = [np.full(int(vals[s].max(initial=0)) + 1, -1) for s in (0, 1)]
        for s in (0, 1):
            reps[s][vals[s][::-1]] = np.arange(len(vals[s]))[::-1]
        out = {}
        for s, (codes_, table) in enumerate(((lc, rows[0]), (rc, rows[1]))):
            if s == 1 and self.spec.semi_anti:
                break
            at = np.where(codes_[pick] >= 0, reps[s][np.maximum(codes_[pick], 0)], -1)
            taken = table.take(pa.array(at, mask=at < 0))
            for c in self.sides[s].cols:
                out[c] = taken.column(c)
        n = len(pick)
        return pa.table({**out, OP: pa.array(ops, pa.string()),
                         EMIT_TS: pa.array(np.zeros(n, np.int64)),
                         ROWNUM: pa.array(np.zeros(n, np.int64))}, schema=self.schema)
