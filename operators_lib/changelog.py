"""Row kinds and materialization of a changelog into a final table (a multiset of rows)."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import pandas as pd

INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = "+I", "-U", "+U", "-D"
ADDS = (INSERT, UPDATE_AFTER)
RETRACTS = (UPDATE_BEFORE, DELETE)
KINDS = ADDS + RETRACTS


@dataclass
class Materialized:
    rows: pd.DataFrame
    problems: list[str]  # retractions of rows that were not present (a malformed changelog)


def canonical_nan(v):
    """``v``, every NaN as one object: NaN != NaN, but a tuple holding the same object equals
    itself, so rows with NaN values match as keys (as Flink's GROUP BY puts NaNs together)."""
    return math.nan if isinstance(v, float) and v != v else v


def materialize(changelog: pd.DataFrame, op_col: str, columns: list[str]) -> Materialized:
    """Apply +I/+U (add) and -U/-D (retract) in order; keep the surviving rows in the order in
    which they were (last) added."""
    live: dict[tuple, list[int]] = {}
    problems = []
    counts: Counter = Counter()
    ops = changelog[op_col].tolist()
    frame = changelog[columns]
    keys = [tuple(None if z else canonical_nan(v) for v, z in zip(r, null)) for r, null in zip(
        frame.itertuples(index=False, name=None), frame.isna().itertuples(index=False, name=None))]
    for i, (op, key) in enumerate(zip(ops, keys)):
        if op in ADDS:
            live.setdefault(key, []).append(i)
            counts[key] += 1
        elif op in RETRACTS:
            if counts[key] <= 0:
                problems.append(f"{op} of a row that is not present: {key}")
                continue
            counts[key] -= 1
            live[key].pop()
        else:
            raise ValueError(f"unknown row kind {op!r}")
    keep = sorted(i for idx in live.values() for i in idx)
    return Materialized(changelog.iloc[keep][columns].reset_index(drop=True), problems)
