"""Regular (unbounded) join as a transformWithState processor over buckets of join keys.

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
- Per key and micro-batch only the net change is emitted: retractions as -D, then additions as
  +I (a row added and retracted within one micro-batch is not emitted at all). With one input
  row per micro-batch this is exactly Flink's changelog, up to the order of the rows of one step.

State TTL (``table.exec.state.ttl``, Flink's meaning): every stored record keeps the time it
was last written (added, copies or match count changed); when its key is next touched (or a
state sweep passes, rows.py), records idle longer than the TTL are dropped first, so later
rows no longer see them (results emitted earlier stay), and a ``TTL`` marker row with the key
is emitted for the parity report. The clock is the micro-batch's processing time
(``current_timestamp()``): no timers, so scheduled ``availableNow`` runs terminate.

State layout per side, chosen from the side's unique key (as Flink's JoinRecordStateViews):
- JoinKeyContainsUniqueKey: one record per join key;
- InputSideHasUniqueKey: unique key -> record;
- InputSideHasNoUniqueKey: record -> number of copies.
Each stored record carries its number of matches (used by outer sides). Both sides of a key are
one value in the key's state page (rows.SlotState): read and written once per micro-batch.
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from operators_lib.plan import TTL, Calc, Cond
from operators_lib.stream import calc
from operators_lib.stream.rows import (
    ChangelogProcessor,
    Changes,
    KeyRows,
    net_changes,
)

SIDE = "tw__side"  # 0 = left input, 1 = right input
LAYOUTS = ("join_key_contains_unique_key", "input_has_unique_key", "no_unique_key")


@dataclass(frozen=True)
class SideSpec:
    cols: tuple[str, ...]  # the side's columns in the processor's input (and output)
    names: tuple[str, ...]  # their names in the plan (the residual condition's)
    kinds: tuple[str, ...]  # rows.value_kind per column
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


class _View:
    """Stored records of one side under one join key: entries ``[row, copies, matches,
    written]`` (written: the TTL clock at the last write, None without TTL)."""

    def __init__(self, spec: SideSpec, data, now: int | None):
        self.spec = spec
        self.now = now
        self.data = data if data is not None else (None if spec.layout == LAYOUTS[0] else {})

    def expire(self, cutoff: int) -> bool:
        """Drop records written before ``cutoff``; True if any was."""
        if self.spec.layout == LAYOUTS[0]:
            if self.data is not None and self.data[3] is not None and self.data[3] < cutoff:
                self.data = None
                return True
            return False
        old = [slot for slot, e in self.data.items() if e[3] is not None and e[3] < cutoff]
        for slot in old:
            del self.data[slot]
        return bool(old)

    def entries(self) -> list[list]:
        if self.spec.layout == LAYOUTS[0]:
            return [self.data] if self.data is not None else []
        return list(self.data.values())

    def _slot(self, row: tuple):
        if self.spec.layout == LAYOUTS[1]:
            return tuple(row[i] for i in self.spec.unique)
        return row

    def add(self, row: tuple, matches: int) -> None:
        if self.spec.layout == LAYOUTS[0]:
            self.data = [row, 1, matches, self.now]
            return
        slot = self._slot(row)
        entry = self.data.get(slot)
        if entry is not None and self.spec.layout == LAYOUTS[2]:
            entry[1] += 1  # an identical record matches the same rows: same match count
            entry[3] = self.now
        else:
            self.data[slot] = [row, 1, matches, self.now]

    def retract(self, row: tuple) -> None:
        if self.spec.layout == LAYOUTS[0]:
            self.data = None
            return
        slot = self._slot(row)
        entry = self.data.get(slot)
        if entry is None:
            return
        entry[1] -= 1
        entry[3] = self.now
        if entry[1] <= 0:
            del self.data[slot]


_OPS = {"=": operator.eq, "<>": operator.ne, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge}


def compile_cond(cond: Cond, left: dict[str, int], right: dict[str, int]) -> Callable:
    """``cond`` as ``f(left_row, right_row) -> True | False | None`` (SQL three-valued logic)."""
    if cond.op == "COL":
        name = cond.args[0]
        if name in left:
            i = left[name]
            return lambda lr, rr: lr[i]
        j = right[name]
        return lambda lr, rr: rr[j]
    if cond.op in ("AND", "OR"):
        a, b = (compile_cond(c, left, right) for c in cond.args)
        stop = cond.op == "OR"  # OR stops at TRUE, AND at FALSE

        def both(lr, rr):
            x = a(lr, rr)
            if x is not None and bool(x) == stop:
                return stop
            y = b(lr, rr)
            if y is not None and bool(y) == stop:
                return stop
            return None if x is None or y is None else not stop
        return both
    if cond.op == "NOT":
        inner = compile_cond(cond.args[0], left, right)

        def negate(lr, rr):
            x = inner(lr, rr)
            return None if x is None else not x
        return negate
    x, y = (_operand(a, left, right) for a in cond.args)
    if cond.op == "<=>":
        def same(lr, rr):
            a, b = x(lr, rr), y(lr, rr)
            return (a is None and b is None) or (a is not None and b is not None and a == b)
        return same
    op = _OPS[cond.op]

    def compare(lr, rr):
        a, b = x(lr, rr), y(lr, rr)
        return None if a is None or b is None else op(a, b)
    return compare


def _operand(arg: str | Calc, left: dict[str, int], right: dict[str, int]) -> Callable:
    """A comparison operand as ``f(left_row, right_row) -> value``: a column of either side,
    or a value computed from both (stream/calc.py)."""
    if isinstance(arg, Calc):
        args = [_operand(a, left, right) for a in arg.args]
        return lambda lr, rr: calc.scalar(arg, [f(lr, rr) for f in args])
    if arg in left:
        i = left[arg]
        return lambda lr, rr: lr[i]
    j = right[arg]
    return lambda lr, rr: rr[j]


class JoinProcessor(ChangelogProcessor):
    name = "join"

    def __init__(self, spec: JoinSpec, key_cols: list[str]):
        super().__init__(key_cols, spec.ttl_ms)
        self.spec = spec

    def init(self, handle) -> None:
        super().init(handle)
        spec = self.spec
        self.sides = (spec.left, spec.right)
        self.cols = list(spec.left.cols if spec.semi_anti else spec.left.cols + spec.right.cols)
        self.nulls = (tuple([None] * len(spec.left.cols)), tuple([None] * len(spec.right.cols)))
        self.cond = None
        if spec.residual is not None:
            self.cond = compile_cond(spec.residual,
                                     {c: i for i, c in enumerate(spec.left.names)},
                                     {c: i for i, c in enumerate(spec.right.names)})

    def process(self, key: tuple, data: KeyRows, stored, changes: Changes):
        delta: Counter = Counter()
        null_key = any(key[0::2])  # stream/planner.grouping_keys: (NULL flag, value) pairs
        now = self.now
        stored = stored or (None, None)
        views = None if null_key else (_View(self.spec.left, stored[0], now),
                                       _View(self.spec.right, stored[1], now))
        if views is not None and now is not None:
            expired = [v.expire(now - self.spec.ttl_ms) for v in views]
            if any(expired):
                changes.emit([self._ttl_marker(key[1::2])], [TTL])
        sides = [data.values(SIDE)[i] for i in data.order]
        rows: list[tuple] = [()] * len(sides)
        for s in set(sides):  # each row as a tuple of its own side's columns only
            at = [i for i, x in enumerate(sides) if x == s]
            for i, row in zip(at, data.rows(self.sides[s].cols, self.sides[s].kinds, at)):
                rows[i] = row
        for s, add, row in zip(sides, data.adds, rows):
            if not null_key:
                self._record(s, row, add, views, delta)
            elif self.spec.kind == "ANTI" and s == 0:  # no match: visible
                delta[row] += 1 if add else -1
            elif self.sides[s].outer:
                delta[self._pad(s, row)] += 1 if add else -1
        changes.emit(*net_changes({r: n for r, n in delta.items() if n}))
        if views is not None and any(v.entries() for v in views):
            return views[0].data, views[1].data
        return None

    def expire(self, key: tuple, stored, cutoff: int, changes: Changes):
        views = (_View(self.spec.left, stored[0], None), _View(self.spec.right, stored[1], None))
        if not any([v.expire(cutoff) for v in views]):
            return stored
        changes.emit([self._ttl_marker(key[1::2])], [TTL])
        return (views[0].data, views[1].data) if any(v.entries() for v in views) else None

    # -- the per-record rules (module docstring) ---------------------------------------------
    def _record(self, s: int, row: tuple, add: bool, views, delta: Counter) -> None:
        me, other = views[s], views[1 - s]
        me_outer, other_outer = self.sides[s].outer, self.sides[1 - s].outer
        matches = [e for e in other.entries() if self._matches(s, row, e[0])]
        n = sum(e[1] for e in matches)
        sign = 1 if add else -1
        if self.spec.semi_anti:
            self._semi_anti(s, row, sign, matches, n, delta)
        elif n == 0:
            if me_outer:
                delta[self._pad(s, row)] += sign
        else:
            for e in matches:
                delta[self._pair(s, row, e[0])] += sign * e[1]
            if other_outer:
                for e in matches:
                    if e[2] == (0 if add else 1):  # the other row gains its first / loses its
                        delta[self._pad(1 - s, e[0])] -= sign * e[1]  # last partner
                    e[2] += sign
                    e[3] = me.now
        if add:
            me.add(row, n)
        else:
            me.retract(row)

    def _semi_anti(self, s: int, row: tuple, sign: int, matches: list, n: int,
                   delta: Counter) -> None:
        semi = self.spec.kind == "SEMI"
        if s == 0:
            if (n > 0) == semi:
                delta[row] += sign
            return
        for e in matches:  # left records gaining their first / losing their last partner
            if e[2] == (0 if sign > 0 else 1):
                delta[e[0]] += (sign if semi else -sign) * e[1]
            e[2] += sign
            e[3] = self.now

    def _ttl_marker(self, key: tuple) -> tuple:
        """A row carrying the expired join key in the left key columns."""
        row = [None] * len(self.cols)
        for pos, value in zip(self.spec.left.key_pos, key):
            row[pos] = value
        return tuple(row)

    def _matches(self, s: int, row: tuple, other: tuple) -> bool:
        if self.cond is None:
            return True
        return self.cond(row, other) is True if s == 0 else self.cond(other, row) is True

    def _pair(self, s: int, row: tuple, other: tuple) -> tuple:
        return row + other if s == 0 else other + row

    def _pad(self, s: int, row: tuple) -> tuple:
        return row + self.nulls[1] if s == 0 else self.nulls[0] + row
