"""The parity verdict of a whole result: batch against stream, and what may explain where they
differ. ``twinflow run`` and a scheduled run of an updating query (its result after the run)
both decide it here.

In order: equal; an aggregate without GROUP BY over no input (``EMPTY_INPUT``: Flink's two modes
differ); the rows outside the keys whose state expired are equal (``TTL_EXPLANATION``); batch
over the input without the late rows equals the stream; the stream split SESSION windows that
batch merges. Anything else fails, with a sample of the rows that differ.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import DataFrame

from operators_lib.ops.reports import ParityReport
from operators_lib.parity.compare import (
    EMPTY_INPUT,
    TTL_EXPLANATION,
    TTL_UPSTREAM_NOTE,
    Diff,
    compare_frames,
    empty_global_aggregate,
    session_splits_differ,
    without_expired,
)
from operators_lib.plan import Node

FAILED = "failed"


@dataclass
class Explanations:
    """What the stream step saw that may explain a difference from batch."""

    expired: DataFrame | None = None  # the TTL_KEY hashes of keys whose state expired
    expired_upstream: bool = False  # state expired below the last join / aggregate
    on_time_batch: Callable[[], DataFrame] | None = None  # batch without the late rows
    late_rows: int = 0
    late_row_windows: int = 0
    session_splits: int = 0

    @property
    def any(self) -> bool:
        return self.expired is not None or self.on_time_batch is not None


def verdict(plan: Node, batch: DataFrame, stream: DataFrame, types: dict, columns: list[str],
            why: Explanations) -> tuple[ParityReport, Diff]:
    """The verdict (a report section) and the comparison it rests on."""
    # Where the differences may be explained, their sample is taken only if they are not.
    diff = compare_frames(batch, stream, types, columns, sample=not why.any)
    if diff.equal:
        return ParityReport(verdict="equal", rows=diff.batch_rows), diff
    if empty_global_aggregate(plan, diff):
        return ParityReport(verdict="explained_by_empty_input", rows=1,
                            explanation=EMPTY_INPUT), diff
    result = ParityReport(verdict=FAILED, rows=diff.batch_rows)
    result.add_diff(diff.summary())
    if why.expired is not None and not why.expired_upstream:
        # State TTL: the stream forgot the state of these keys, batch did not. Set their rows
        # aside in both results: what remains must be equal.
        residual = without_expired(batch, stream, why.expired, types, columns)
        if residual.equal:
            result.verdict, result.ttl_expired_keys = "explained_by_ttl", why.expired.count()
            result.explanation = TTL_EXPLANATION
            return result, diff
        result.unexplained = residual.summary()
    elif why.expired_upstream:
        result.note = TTL_UPSTREAM_NOTE
    if why.on_time_batch is not None:
        # Do the differences come only from the late rows? Recompute batch without them (and
        # without the rows in windows that had fired when they arrived).
        residual = compare_frames(why.on_time_batch(), stream, types, columns)
        if residual.equal:
            result.verdict, result.late_rows = "explained_by_late_rows", why.late_rows
            result.late_row_windows = why.late_row_windows
            result.explanation = ("batch over the input without the late rows (and each row "
                                  "without the windows that had fired when it arrived) equals "
                                  "the stream result")
            return result, diff
        result.unexplained = residual.summary()
    if why.session_splits:
        return session_splits_differ(why.session_splits), diff
    if why.any:  # the sample skipped above
        diff = compare_frames(batch, stream, types, columns)
        result.add_diff(diff.summary())
    return result, diff
