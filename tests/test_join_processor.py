"""The regular join's processor (stream/join.py) on random changelogs, through the operator
harness: after every micro-batch, the changelog emitted so far, applied as a multiset, is the
join of the rows alive on both sides, computed here from SQL's definition (pairs with equal
non-NULL keys passing the condition; null-padded rows of an outer side without a match;
SEMI / ANTI: the left rows with a match / without one), and no micro-batch adds and
retracts the same row."""

from __future__ import annotations

import random
from collections import Counter

import pandas as pd
import pytest

from operators_lib.changelog import ADDS
from operators_lib.plan import OP, Cond
from operators_lib.stream.join import LAYOUTS, JoinProcessor, JoinSpec, SideSpec
from operators_lib.stream.rows import BUCKET
from tests.harness import changes, feed, key_columns

KEYS = key_columns(1)
COLS = ("l0", "l1", "l2", "r0", "r1", "r2")
# rows are (a, k, v): a unique id or a small value, the join key k (None: NULL), a value v
CONDITIONS = {"none": (None, lambda lr, rr: True),
              "v<w": (Cond("<", ("v", "w")), lambda lr, rr: lr[2] < rr[2]),
              "v=w or a<b": (Cond("OR", (Cond("=", ("v", "w")), Cond("<", ("a", "b")))),
                             lambda lr, rr: lr[2] == rr[2] or lr[0] < rr[0])}


def _changelog(rng: random.Random, layout: int, batches: int) -> list[list[tuple]]:
    """Micro-batches of (side, op, row); a retraction is of a row added in an earlier one.
    Layout 0: at most one row alive per join key and side; layout 1: unique ids."""
    alive: dict[int, list[tuple]] = {0: [], 1: []}
    out, uid = [], 0
    for _ in range(batches):
        rows, earlier = [], {s: list(alive[s]) for s in (0, 1)}
        for _ in range(rng.randint(1, 12)):
            s = rng.randint(0, 1)
            if earlier[s] and rng.random() < 0.35:
                row = earlier[s].pop(rng.randrange(len(earlier[s])))
                alive[s].remove(row)
                rows.append((s, rng.choice(("-U", "-D")), row))
                continue
            k = rng.choice([1, 2, 3, None])
            if layout == 0 and k is not None and any(r[1] == k for r in alive[s]):
                continue
            uid += 1
            row = (uid if layout == 1 else rng.randint(0, 2), k, rng.randint(0, 3))
            alive[s].append(row)
            rows.append((s, rng.choice(("+I", "+U")), row))
        if rows:
            out.append(rows)
    return out


def _frame(rows: list[tuple], first: int) -> pd.DataFrame:
    values = [(a, k, v, None, None, None) if s == 0 else (None, None, None, a, k, v)
              for s, _, (a, k, v) in rows]
    df = changes([op for _, op, _ in rows], first, key=[k for _, _, (_, k, _) in rows],
                 bucket=0, side=[s for s, _, _ in rows],
                 **{c: list(column) for c, column in zip(COLS, zip(*values))})
    return df.astype({c: "Int64" for c in COLS})


def _join(kind: str, left: Counter, right: Counter, passes) -> Counter:
    """The join of the alive rows by its definition."""
    out: Counter = Counter()
    matched_right: set = set()
    for lr, ln in left.items():
        partners = [(rr, rn) for rr, rn in right.items()
                    if lr[1] is not None and lr[1] == rr[1] and passes(lr, rr)]
        matched_right |= {rr for rr, _ in partners}
        if kind in ("SEMI", "ANTI"):
            if bool(partners) == (kind == "SEMI"):
                out[lr] += ln
            continue
        for rr, rn in partners:
            out[lr + rr] += ln * rn
        if not partners and kind in ("LEFT", "FULL"):
            out[lr + (None,) * 3] += ln
    if kind in ("RIGHT", "FULL"):
        for rr, rn in right.items():
            if rr not in matched_right:
                out[(None,) * 3 + rr] += rn
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kind", ["INNER", "LEFT", "RIGHT", "FULL", "SEMI", "ANTI"])
def test_each_micro_batch_emits_the_change_of_the_join(kind, seed):
    rng = random.Random(f"{kind}-{seed}")
    layout = seed % 3
    cond, passes = CONDITIONS[list(CONDITIONS)[seed % len(CONDITIONS)]]
    side = lambda cols, names, outer: SideSpec(  # noqa: E731
        cols, names, outer, LAYOUTS[layout], (0,) if layout == 1 else (), (1,))
    spec = JoinSpec(kind, side(COLS[:3], ("a", "k", "v"), kind in ("LEFT", "FULL")),
                    side(COLS[3:], ("b", "k2", "w"), kind in ("RIGHT", "FULL")), cond)
    batches = _changelog(rng, layout, 10)
    inputs, first = [], 0
    for rows in batches:
        inputs.append((_frame(rows, first), 0))
        first += len(rows)
    outputs = feed(JoinProcessor(spec, KEYS), [BUCKET], inputs)
    width = 3 if kind in ("SEMI", "ANTI") else 6
    alive: dict[int, Counter] = {0: Counter(), 1: Counter()}
    result: Counter = Counter()
    for rows, out in zip(batches, outputs):
        for s, op, row in rows:
            alive[s][row] += 1 if op in ADDS else -1
        added, retracted = Counter(), Counter()
        rows_out = out[[OP, *out.columns[:width]]].itertuples(index=False, name=None) \
            if len(out) else ()
        for op, *values in rows_out:
            row = tuple(None if pd.isna(x) else int(x) for x in values)
            (added if op in ADDS else retracted)[row] += 1
        assert not set(added) & set(retracted), "a row added and retracted in one micro-batch"
        result.update(added)
        result.subtract(retracted)
        expected = _join(kind, +alive[0], +alive[1], passes)
        assert +result == expected and not -result, (rows, dict(result - expected),
                                                     dict(expected - result))
