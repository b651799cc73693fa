"""A changelog applied on the driver, row by row: the tests' reference for what processors
emit (the product materializes on the executors, as signed row counts: result_store.py)."""

from __future__ import annotations

import math
from collections import Counter

import pandas as pd

from operators_lib.changelog import ADDS, RETRACTS
from operators_lib.errors import StateError


def canonical_nan(v):
    """``v``, every NaN as one object: NaN != NaN, but a tuple holding the same object equals
    itself, so rows with NaN values match as keys (as Flink's GROUP BY puts NaNs together).
    An ARRAY, MAP or ROW value (list, (key, value) list, dict) becomes a tuple: a key too."""
    if isinstance(v, float):
        return math.nan if v != v else v
    if isinstance(v, (list, tuple)):
        return tuple(canonical_nan(x) for x in v)
    if isinstance(v, dict):
        return tuple((k, canonical_nan(x)) for k, x in v.items())
    return v


def materialize(changelog: pd.DataFrame, op_col: str, columns: list[str]) -> pd.DataFrame:
    """Apply +I/+U (add) and -U/-D (retract) in order; keep the surviving rows in the order in
    which they were (last) added. A retraction of a row that is not present means the changelog
    is malformed (a bug, or a segment lost): StateError, not a result."""
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
    if problems:
        raise StateError(f"the changelog retracts {len(problems)} row(s) that are not present "
                         "(damaged state or a bug); no result was written: "
                         + "; ".join(problems[:10]))
    keep = sorted(i for idx in live.values() for i in idx)
    return changelog.iloc[keep][columns].reset_index(drop=True)
