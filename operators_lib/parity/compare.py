"""Compare the batch final with the stream final and explain the differences.

Rows are compared as multisets. Floating-point values are compared at 12 significant digits:
the two modes add the same numbers in a different order (Spark's window frames vs the stream
operator's running sums), so the last bits may differ while the results are the same.

``compare_frames`` is the comparison as a Spark job (the executors count each distinct row in
each result; rows whose counts differ differ): only the counts and a sample of the differing
rows reach the driver.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from operators_lib.ops.reports import DiffSummary, ParityReport
from operators_lib.plan import (
    TTL_KEY,
    Aggregate,
    Filter,
    Node,
    Over,
    Project,
    batch_only,
    find,
    processing_time_joins,
    processing_time_windows,
)
from operators_lib.types import FlinkType


@dataclass
class Diff:
    """Rows only in one result: how many, and (some of) them."""

    only_batch: list[tuple]
    only_stream: list[tuple]
    only_batch_count: int = -1  # -1: len(only_batch), all of them listed
    only_stream_count: int = -1
    batch_rows: int | None = None  # the rows of each result (compare_frames counts them)
    stream_rows: int | None = None

    def __post_init__(self) -> None:
        if self.only_batch_count < 0:
            self.only_batch_count = len(self.only_batch)
        if self.only_stream_count < 0:
            self.only_stream_count = len(self.only_stream)

    @property
    def equal(self) -> bool:
        return not self.only_batch_count and not self.only_stream_count

    def summary(self, limit: int = 10) -> DiffSummary:
        return DiffSummary(
            only_in_batch=self.only_batch_count, only_in_stream=self.only_stream_count,
            sample_only_in_batch=[list(map(_show, r)) for r in self.only_batch[:limit]],
            sample_only_in_stream=[list(map(_show, r)) for r in self.only_stream[:limit]])


def _show(v):
    return None if v is None else str(v)


_B, _S = "tw__b", "tw__s"
SAMPLE = 10


def compare_frames(batch: DataFrame, stream: DataFrame, types: dict[str, FlinkType],
                   columns: list[str], sample: bool = True) -> Diff:
    """Batch and stream results compared by one Spark job, which also counts both results'
    rows (module docstring); differing rows are sampled by more jobs (``sample``)."""
    norm = [_comparable(c, types[c]) for c in columns]
    sides = batch.select(*norm, F.lit(1).alias(_B), F.lit(0).alias(_S)).unionByName(
        stream.select(*norm, F.lit(0).alias(_B), F.lit(1).alias(_S)))
    counted = sides.groupBy(*columns).agg(F.sum(_B).alias(_B), F.sum(_S).alias(_S))
    more = F.col(_B) - F.col(_S)
    totals = counted.agg(F.sum(_B).alias("b"), F.sum(_S).alias("s"),
                         F.sum(F.greatest(more, F.lit(0))).alias("only_b"),
                         F.sum(F.greatest(-more, F.lit(0))).alias("only_s")).first()
    samples = [[tuple(r[c] for c in columns) for r in counted.where(which).limit(SAMPLE)
                .collect()] if n and sample else [] for which, n in (
                    (more > 0, totals["only_b"]), (more < 0, totals["only_s"]))]
    return Diff(samples[0], samples[1], totals["only_b"] or 0, totals["only_s"] or 0,
                totals["b"] or 0, totals["s"] or 0)


EMPTY_INPUT = ("an aggregate without GROUP BY over no rows: Flink's batch mode answers one row "
               "(COUNT 0, the others NULL), its streaming mode none, since no row arrived to "
               "update it")


def empty_global_aggregate(plan: Node, diff: Diff) -> bool:
    """Do the results differ only as Flink's two modes do for an aggregate without GROUP BY
    that no input row reached (``EMPTY_INPUT``)?"""
    node = plan
    while isinstance(node, (Filter, Project)):  # the select list and HAVING
        node = node.child
    return (isinstance(node, Aggregate) and not node.group_by and diff.batch_rows == 1
            and diff.stream_rows == 0)


def not_comparable(plan: Node) -> str | None:
    """Why the query's stream and batch results cannot be compared, if they cannot: one of the
    two modes does not exist for it, or its result depends on when rows are processed. Both
    ``twinflow run`` and a scheduled run's parity report it as ``not_applicable``."""
    if processing_time_windows(plan):
        return ("the query has a processing-time window: it exists in stream mode only (there "
                "is no batch to compare), and its windows depend on when rows arrive")
    if batch_only(plan):
        return ("the query has an OVER ordered by a column that is no time attribute: it "
                "exists in batch mode only (as in Flink), so there is no stream to compare")
    if processing_time_joins(plan):
        return ("the query has a processing-time temporal join: each row joins the version "
                "current when it arrives, which batch mode (the latest version) cannot know")
    if any(o.time_kind == "proctime" for o in find(plan, Over)):
        return "the query orders by processing time, which differs between runs by definition"
    return None


def session_splits_differ(splits: int) -> ParityReport:
    """The verdict where stream and batch differ and the stream split sessions: rows arrived
    after the SESSION window they touch had fired (as in Flink), which batch merges."""
    return ParityReport(
        verdict="not_applicable", session_splits=splits,
        reason=f"{splits:,} rows arrived after the SESSION window they touch had fired and "
               "started a new session (as in Flink); batch semantics merge them, so the "
               "results differ by definition")


TTL_EXPLANATION = ("the rows that differ all belong to keys whose state expired "
                   "(table.exec.state.ttl); every other row is equal")
TTL_UPSTREAM_NOTE = ("state expired in an operator below the last join / aggregation: the rows "
                     "it affects cannot be told apart")


def without_expired(batch: DataFrame, stream: DataFrame, expired: DataFrame,
                    types: dict[str, FlinkType], columns: list[str]) -> Diff:
    """``compare_frames`` outside the keys whose state expired (``expired``: their ``TTL_KEY``
    hashes, one column). The stream forgot those keys' state and batch did not, so their rows
    may differ by definition; every other row must still be equal (``twinflow run`` and a
    scheduled run's parity both explain a difference this way)."""
    return compare_frames(batch.join(expired, TTL_KEY, "left_anti"),
                          stream.join(expired, TTL_KEY, "left_anti"), types, columns)


def _comparable(name: str, t: FlinkType) -> Column:
    """A column both results hold the same way when their values are equal: floats at 12
    significant digits (-0.0 as 0.0, NaN as NaN), values Spark cannot group (a MAP, or what
    holds one) and TIME as text."""
    c = F.col(name)
    if t.is_floating:
        return F.when(F.isnan(c), F.lit("NaN")).otherwise(
            F.format_string("%.12g", c.cast("double") + F.lit(0.0))).alias(name)
    if t.name == "TIME" or "MAP" in t.sql():  # a MAP in its keys' order
        return c.cast("string").alias(name)
    return c
