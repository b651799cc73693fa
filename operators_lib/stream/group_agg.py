"""Unbounded GROUP BY aggregation as a transformWithState processor over buckets of groups.

Implements ``SELECT keys, agg(x), ... FROM input GROUP BY keys`` over an input that may be a
changelog (Flink's GroupAggFunction with retraction):
- ACC rows (+I/+U) are accumulated, RETRACT rows (-U/-D) are retracted; NULL arguments are
  skipped (COUNT(*) counts rows). DISTINCT aggregates count each distinct value once.
- Per group and micro-batch the result row is compared before and after: a new group emits
  ``+I``, a changed one ``-U`` (old) then ``+U`` (new), a group whose last row is retracted
  ``-D``; an unchanged result emits nothing. With one input row per micro-batch this is
  exactly Flink's changelog.
- Result types as Flink's: COUNT BIGINT; SUM/AVG keep the argument type (an integer SUM wraps,
  an integer AVG adds in BIGINT, then truncates toward zero); DECIMAL SUM/AVG are
  DECIMAL(38, s) / DECIMAL(38, max(s, 6)).

State TTL (``table.exec.state.ttl``): a group idle longer than the TTL when it is next touched
starts afresh (a state sweep, rows.py, drops it); its earlier result row stays emitted, as in
Flink, and a ``TTL`` marker row with the group key is emitted for the parity report. Clock:
the micro-batch's processing time.

Each output row carries the arrival (``tw__rownum``) of the last input row that changed it: a
TopN downstream ranks ties by it, as Flink ranks an updated row after its equals. Below a TopN
(``Aggregate.ranked``) the rows of a key are applied one at a time to find that row exactly;
elsewhere the key's last row of the micro-batch stands in for it.

State per group (a row of its slot page, rows.SlotState): the number of rows, the TTL clock
of its last write, the arrival of the current result row and one accumulator per aggregate: a
non-NULL count (COUNT), sum and count (SUM, AVG), or value -> copies (MIN, MAX and DISTINCT
aggregates, so that retractions are exact); for FIRST_VALUE, LAST_VALUE and LISTAGG the
non-NULL values in arrival order, and for M2 (Welford's sum of squared deviations, of which
sql/aggregate.py computes STDDEV_* / VAR_*) Flink's (n, mean, m2) in DOUBLE.

Order-sensitive aggregates, as Flink's *WithRetract functions (measured, Flink 2.3):
- FIRST_VALUE / LAST_VALUE / LISTAGG: +I/+U appends the value, -U/-D removes the earliest equal
  value still held; the result is the first / last value held / all of them joined by the
  separator (',' by default), NULL when none is held. Retracting the first value thus makes the
  next one in arrival order the FIRST_VALUE.
- M2: +I/+U and -U/-D replay WelfordM2AggFunction's accumulate and retract steps in arrival
  order (retractions of a micro-batch first, as the rows reach ``process``); NULL when no value
  is held or rounding left m2 below 0.
Below such an aggregate, a GROUP BY orders its changes by the input row that caused them
(``Aggregate.ranked``, as under a TopN), so that the values arrive in Flink's order.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

import pyarrow as pa

from operators_lib.changelog import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE
from operators_lib.plan import ROWNUM, TTL, AggCall
from operators_lib.stream.rows import (
    KEY,
    WRITTEN,
    ChangelogProcessor,
    Changes,
    KeyRows,
)
from operators_lib.stream.state_view import KIND_TYPES


@dataclass(frozen=True)
class AggSpec:
    keys: tuple[str, ...]  # group key columns (output first); none: one global group
    key_kinds: tuple[str, ...]
    aggs: tuple[AggCall, ...]  # ``arg`` names the processor's input column
    arg_kinds: tuple[str, ...]  # rows.value_kind per aggregate argument ("" for COUNT(*))
    outputs: tuple[str, ...]  # output column per aggregate
    ttl_ms: int | None = None
    ranked: bool = False  # a TopN ranks the output: arrivals exact within a micro-batch


_ORDERED = ("FIRST_VALUE", "LAST_VALUE", "LISTAGG")


def _uses_values(call: AggCall) -> bool:
    return call.distinct or call.func in ("MIN", "MAX")


def _new_acc(call: AggCall):
    if call.func in _ORDERED:
        return []
    if call.func == "M2":
        return [0, 0.0, 0.0]  # n, mean, m2 (WelfordM2Accumulator)
    if _uses_values(call):
        return Counter()
    return [0, 0] if call.func in ("SUM", "AVG") else 0


def _acc_fields(call: AggCall, kind: str) -> list[tuple[str, pa.DataType | None]]:
    """An accumulator's fields in its group's row of a slot page (``_new_acc``'s shapes):
    (name suffix, Arrow type where the argument's kind tells it, else None)."""
    value, count, double = KIND_TYPES.get(kind), pa.int64(), pa.float64()
    values = pa.list_(value) if value else None
    if call.func in _ORDERED:
        return [("", values)]
    if call.func == "M2":
        return [(".n", count), (".mean", double), (".m2", double)]
    if _uses_values(call):
        return [(".values", values), (".copies", pa.list_(count))]
    if call.func in ("SUM", "AVG"):
        return [(".sum", value), (".n", count)]
    return [("", count)]


def _packed(call: AggCall, acc) -> tuple:
    """An accumulator as its fields (``_acc_fields``)."""
    if call.func in _ORDERED:
        return (acc,)
    if call.func == "M2":
        return tuple(acc)
    if _uses_values(call):
        return list(acc), list(acc.values())
    if call.func in ("SUM", "AVG"):
        return _stored_sum(acc[0], call), acc[1]
    return (acc,)


def _unpacked(call: AggCall, fields: tuple):
    """The accumulator ``_packed`` gave the fields of."""
    if call.func in _ORDERED:
        return fields[0]
    if call.func == "M2":
        return list(fields)
    if _uses_values(call):
        return Counter(dict(zip(*fields)))  # in the order the values came
    return list(fields) if call.func in ("SUM", "AVG") else fields[0]


def _stored_sum(total, call: AggCall):
    """An integer sum as a BIGINT: past its range, wrapped. ``_result`` reads the same of it:
    it wraps the sum to the type's bits (64 at most)."""
    if isinstance(total, int) and call.type.is_integral and not -(2**63) <= total < 2**63:
        return (total + 2**63) % 2**64 - 2**63
    return total


def _welford(acc: list, v, add: bool) -> None:
    """Flink's WelfordM2AggFunction.accumulate / retract, operation for operation (the
    rounding of each step is part of the result)."""
    x = float(v)  # doubleValue(): correctly rounded (a DECIMAL, a BIGINT past 2**53)
    if add:
        acc[0] += 1
        if acc[0] <= 0:
            return
        delta = x - acc[1]
        acc[1] += delta / acc[0]
        acc[2] += delta * (x - acc[1])
        return
    acc[0] -= 1
    if acc[0] <= 0:
        if acc[0] == 0:
            acc[1], acc[2] = 0.0, 0.0
        return
    delta2 = x - acc[1]
    acc[1] -= delta2 / acc[0]
    acc[2] -= (x - acc[1]) * delta2


def _wrap(v: int, call: AggCall) -> int:
    """Flink adds a SUM in its argument's type, a GROUP BY's AVG in BIGINT: both wrap."""
    bits = call.type.integral_bits() if call.func == "SUM" else 64
    if bits >= 64 and -(2**63) <= v < 2**63:
        return v
    lim = 2 ** (bits - 1)  # Flink sums in the argument's type: it wraps
    return (v + lim) % (2 * lim) - lim


def _result(call: AggCall, acc, rows: int):
    if call.func in _ORDERED:
        if not acc:
            return None
        if call.func == "LISTAGG":
            return ("," if call.separator is None else call.separator).join(acc)
        return acc[0] if call.func == "FIRST_VALUE" else acc[-1]
    if call.func == "M2":  # NULL also where unmatched retractions left m2 below 0
        return acc[2] if acc[0] > 0 and acc[2] >= 0 else None
    if call.func == "COUNT":
        if call.arg is None:
            return rows
        return len(acc) if call.distinct else acc
    if call.func in ("MIN", "MAX"):
        return (min if call.func == "MIN" else max)(acc) if acc else None
    if call.distinct:
        total, n = sum(acc), len(acc)
    else:
        total, n = acc
    if n == 0:
        return None
    t = call.type
    if t.is_integral:
        total = _wrap(int(total), call)
        if call.func == "AVG":  # Java integer division truncates toward zero
            q = abs(total) // n
            return q if total >= 0 else -q
        return total
    if call.func == "SUM":
        return total
    if t.name == "DECIMAL":
        return (Decimal(total) / n).quantize(Decimal(1).scaleb(-t.scale), ROUND_HALF_UP)
    return total / n


class GroupAggProcessor(ChangelogProcessor):
    name = "group"

    def __init__(self, spec: AggSpec, key_cols: list[str]):
        super().__init__(key_cols, spec.ttl_ms)
        self.spec = spec
        self.cols = list(spec.keys + spec.outputs)
        fields = [("rows", pa.int64()), (WRITTEN, pa.int64()), ("arrival", pa.int64())]
        self.widths = []  # fields per accumulator
        for i, (call, kind) in enumerate(zip(spec.aggs, spec.arg_kinds)):
            acc = _acc_fields(call, kind)
            fields += [(f"a{i}{suffix}", t) for suffix, t in acc]
            self.widths.append(len(acc))
        self.value_names = [name for name, _ in fields]
        self.page_types = {name: t for name, t in fields if t is not None}
        if len(key_cols) == 2 * len(spec.keys):  # a (NULL flag, value) pair per group key
            for i, kind in enumerate(spec.key_kinds):
                self.page_types[f"{KEY}{2 * i}"] = pa.bool_()
                if kind in KIND_TYPES:
                    self.page_types[f"{KEY}{2 * i + 1}"] = KIND_TYPES[kind]

    def process(self, key: tuple, data: KeyRows, st, changes: Changes):
        spec = self.spec
        group = data.rows(spec.keys, spec.key_kinds, [0])[0]
        now = self.now
        if st is not None and now is not None and st[2] < now - spec.ttl_ms:
            st = None
            changes.emit([group + (None,) * len(spec.aggs)], [TTL])
        st = st or [0, [_new_acc(c) for c in spec.aggs], now, 0]
        st[2] = now
        before, old_rownum = self._row(group, st), st[3]
        adds = data.adds
        values = [[r[0] for r in data.rows([c.arg], [kind])] if c.arg else None
                  for c, kind in zip(spec.aggs, spec.arg_kinds)]
        rownums = data.values(ROWNUM)
        if spec.ranked and len(adds) > 1:
            last = self._apply_each(group, st, values, adds, before)
            arrival = int(rownums[data.order[last]])
        else:
            st[0] += 2 * sum(adds) - len(adds)
            for i, call in enumerate(spec.aggs):
                if values[i] is not None:
                    st[1][i] = self._apply(call, st[1][i], values[i], adds)
            arrival = max(int(rownums[i]) for i in data.order)
        after = self._row(group, st)
        if after != before:
            # A changed row arrives anew downstream (a TopN ranks ties by arrival).
            st[3] = arrival
        if before is None and after is not None:
            changes.emit([after], [INSERT], [st[3]])
        elif after is None and before is not None:
            changes.emit([before], [DELETE], [old_rownum])
        elif before != after:
            changes.emit([before, after], [UPDATE_BEFORE, UPDATE_AFTER], [old_rownum, st[3]])
        return st if st[0] > 0 else None

    def expire(self, key: tuple, st, cutoff: int, changes: Changes):
        if st[2] >= cutoff:
            return st
        group = tuple(None if null else v for null, v in zip(key[0::2], key[1::2]))
        changes.emit([group + (None,) * len(self.spec.aggs)], [TTL])
        return None

    def value_row(self, st) -> tuple:
        return (st[0], st[2], st[3],
                *(f for call, acc in zip(self.spec.aggs, st[1]) for f in _packed(call, acc)))

    def value_of(self, row: tuple):
        accs, at = [], 3
        for call, width in zip(self.spec.aggs, self.widths):
            accs.append(_unpacked(call, row[at:at + width]))
            at += width
        return [row[0], accs, row[1], row[2]]

    def _apply(self, call: AggCall, acc, values: list, adds):
        for v, add in zip(values, adds):
            if v is None:
                continue
            sign = 1 if add else -1
            if call.func in _ORDERED:
                if add:
                    acc.append(v)
                elif v in acc:  # the earliest equal value goes (Flink: a retraction of
                    acc.remove(v)  # something never accumulated is ignored)
            elif call.func == "M2":
                _welford(acc, v, add)
            elif isinstance(acc, Counter):
                acc[v] += sign
                if acc[v] <= 0:
                    del acc[v]
            elif isinstance(acc, list):
                acc[0] = acc[0] + v if add else acc[0] - v
                acc[1] += sign
            else:
                acc += sign
        return acc

    def _apply_each(self, group: tuple, st, values: list, adds: list[bool], before) -> int:
        """Apply the rows one at a time; the position of the last one that changed the
        result row (its arrival is the row's, exactly as batch mode computes it)."""
        last, prev = len(adds) - 1, before
        for j, add in enumerate(adds):
            st[0] += 1 if add else -1
            for i, call in enumerate(self.spec.aggs):
                if values[i] is not None:
                    st[1][i] = self._apply(call, st[1][i], [values[i][j]], [add])
            row = self._row(group, st)
            if row != prev:
                last, prev = j, row
        return last

    def _row(self, group: tuple, st) -> tuple | None:
        if st[0] <= 0:
            return None
        return group + tuple(_result(c, a, st[0]) for c, a in zip(self.spec.aggs, st[1]))
