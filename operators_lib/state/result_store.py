"""The materialized result of a scheduled updating query, kept per run as signed row counts.

A query whose result rows are retracted and updated (regular joins, GROUP BY, TopN) has a
result whose size is bounded by its keys, not by its history. Each run merges only its own
micro-batches' changelog into the result of the run before: ``+I``/``+U`` count +1, ``-U``/``-D``
-1, rows summed per distinct row (Spark's grouping: NULLs together, NaN with NaN, -0.0 with
0.0), so a run costs its new changelog plus the result, on the executors. A row whose count
goes below zero was retracted without being present: the changelog is damaged (StateError, no
result). Each row keeps its place in the changelog (``plan.PLACE``) where it was last added,
so the result reads in the order rows were (last) added.

Snapshots live in ``<state>/result/upto-<batch>`` (the result after micro-batch ``batch``); the
newest ``KEEP`` are kept. The result as of any committed batch is the newest snapshot before it
plus the changelog since: a re-run of a recent interval reads its snapshot, an older one
rebuilds from an older snapshot (or from the start of the changelog).

Append-only queries (OVER, windows, interval and temporal joins, keep-first deduplication)
need no store: a run's result is the rows its micro-batches emitted.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pyspark.sql import Column, DataFrame, Observation, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from operators_lib.changelog import ADDS, KINDS, RETRACTS
from operators_lib.errors import StateError
from operators_lib.io import storage
from operators_lib.io.storage import Place
from operators_lib.plan import BATCH, MARKERS, OP, PLACE, SEQ, TTL_KEY, Node, append_only
from operators_lib.stream.keying import CHANGELOG_FIELDS
from operators_lib.stream.runner import changelog_files, changelog_frame, last_commit

COUNT = "tw__count"
RESULT_ORDER = "tw__place"
KEEP = 3
_PREFIX = "upto-"
CHECKED = "_CHECKED"  # written last in a result snapshot: it is whole (what S3 goes by)


def result_rows(spark: SparkSession, state: Path, upto: int, schema: T.StructType,
                into: Path | None = None) -> DataFrame:
    """The result after micro-batch ``upto`` (-1: before the first), each row as often as it is
    present, with ``RESULT_ORDER``: ordered by it, rows read in the order they were last
    added. Merged once and written, its check folded into that write: as a snapshot of the
    store, or (``into``) to that directory, the store left as it is (the audit and verify may
    run beside a query run; a ``twinflow run`` keeps one result). StateError if the changelog
    retracts a row that is not present."""
    columns = schema.fieldNames()
    snapshots = _snapshots(state)
    if upto in snapshots:
        counted = spark.read.parquet(str(snapshots[upto]))
    else:
        base = max((b for b in snapshots if b < upto), default=-1)
        files = changelog_files(state / "changelog", state / "checkpoint", base + 1, upto)
        counted = merge(spark.read.parquet(str(snapshots[base])) if base >= 0 else None,
                        spark.read.parquet(*map(str, files)) if files else None, columns)
        if counted is None:  # only before the first micro-batch (upto -1)
            return spark.createDataFrame([], T.StructType(
                [*schema.fields, T.StructField(RESULT_ORDER, T.IntegerType())]))
        counted = _write_checked(spark, counted, into or state / "result" /
                                 f"{_PREFIX}{upto:08d}", columns)
        if into is None:
            kept = _snapshots(state)
            for b in sorted(kept)[:-KEEP]:
                storage.rmtree(kept[b])
    return counted.select(*columns, RESULT_ORDER, F.explode(
        F.array_repeat(F.lit(0), F.col(COUNT).cast("int"))).alias(COUNT)).drop(COUNT)


def changelog(spark: SparkSession, plan: Node, state: Path, first: int = 0,
              upto: int | None = None) -> DataFrame:
    """The changelog of micro-batches ``first`` .. ``upto`` (default: the last committed), read
    by the executors, unordered (order by ``plan.PLACE``); none: no rows."""
    log = changelog_frame(spark, state / "changelog", state / "checkpoint", first, upto)
    if log is not None:
        return log
    last = last_commit(state / "checkpoint")
    if last >= 0:  # no micro-batch in the range: no rows, with the columns the stream writes
        return changelog_frame(spark, state / "changelog", state / "checkpoint", last,
                               last).limit(0)
    return spark.createDataFrame([], T.StructType(
        [*schema(plan).fields, *CHANGELOG_FIELDS,
         *[T.StructField(c, T.LongType()) for c in (BATCH, SEQ)]]))


def kind_counts() -> list[Column]:
    """Aggregates counting each row kind and marker of a changelog (named by the kind), for an
    observation on a job that reads it anyway."""
    return [F.count(F.when(F.col(OP) == k, 1)).alias(k) for k in (*KINDS, *MARKERS)]


def schema(plan: Node, ttl: bool = False) -> T.StructType:
    """The query's result columns (``ttl``: and the state TTL key, for parity)."""
    return T.StructType([T.StructField(f.name, f.type.spark()) for f in plan.fields]
                        + ([T.StructField(TTL_KEY, T.LongType())] if ttl else []))


def result_schema(plan: Node, log: DataFrame) -> T.StructType:
    """The columns the result store keeps of the changelog ``log`` (``changelog``): the
    query's, and the state TTL key where the stream writes one."""
    return schema(plan, ttl=TTL_KEY in log.columns)


def merge(base: DataFrame | None, changelog: DataFrame | None, columns: list[str]
          ) -> DataFrame | None:
    """``base`` (counted rows) plus the signed rows of ``changelog``: counted rows, a count
    below zero where a row was retracted without being present (``_checked``)."""
    if changelog is None:
        return base
    add = F.col(OP).isin(*ADDS)
    signed = changelog.where(~F.col(OP).isin(*MARKERS)).select(
        *columns, F.when(add, 1).otherwise(-1).cast("long").alias(COUNT),
        F.when(add, F.struct(*PLACE)).alias(RESULT_ORDER))
    rows = signed if base is None else base.unionByName(signed)
    keys, values = _grouping(rows)
    counted = rows.groupBy(*keys).agg(F.sum(COUNT).alias(COUNT),
                                      F.max(RESULT_ORDER).alias(RESULT_ORDER), *values)
    return counted.select(*columns, COUNT, RESULT_ORDER).where(F.col(COUNT) != 0)


def _checked(counted: DataFrame, columns: list[str], negative: int) -> DataFrame:
    """``counted`` if none of its counts is below zero (``negative``: how many are), else
    StateError naming (some of) those rows."""
    if negative:
        rows = counted.where(F.col(COUNT) < 0).limit(10).collect()
        raise StateError(
            f"the changelog retracts {negative} row(s) that are not present (damaged state or "
            "a bug); no result was written: " + "; ".join(
                f"a retraction of {tuple(r[c] for c in columns)}" for r in rows))
    return counted


def _grouping(rows: DataFrame) -> tuple[list[Column], list[Column]]:
    """Group by every result column; a MAP (which Spark cannot group by) by its sorted
    entries, its value taken from the group."""
    keys, values = [], []
    for f in rows.schema.fields:
        if f.name in (COUNT, RESULT_ORDER):
            continue
        if isinstance(f.dataType, T.MapType):
            keys.append(F.array_sort(F.map_entries(f.name)).alias(f"tw__key_{f.name}"))
            values.append(F.first(f.name).alias(f.name))
        else:
            keys.append(F.col(f.name))
    return keys, values


def _snapshots(state: Place) -> dict[int, Place]:
    """The snapshots that are whole: renamed into place, or on S3 marked ``CHECKED``."""
    return {int(p.name.removeprefix(_PREFIX)): p
            for p in (state / "result").glob(f"{_PREFIX}*")
            if p.is_dir() and (storage.renames(p) or (p / CHECKED).exists())}


def _write_checked(spark: SparkSession, counted: DataFrame, target: Place,
                   columns: list[str]) -> DataFrame:
    """``counted`` written to ``target`` (a directory) and checked (the write counts the rows
    below zero), read back. It becomes whole in one step (storage.whole_dir: renamed into
    place, or on S3 written in place, ``CHECKED`` last)."""
    with storage.whole_dir(target, CHECKED) as tmp:
        observed = Observation()
        counted.observe(observed, F.count(F.when(F.col(COUNT) < 0, 1)).alias("negative")) \
            .write.parquet(str(tmp))
        negative = observed.get["negative"]
        if negative:
            try:
                _checked(spark.read.parquet(str(tmp)), columns, negative)
            finally:
                storage.rmtree(tmp)
        (tmp / CHECKED).write_text("")
    return spark.read.parquet(str(target))


def retracts(plan: Node, kinds: Mapping[str, int]) -> bool:
    """Whether a changelog with these counts of each row kind retracts rows; an append-only
    query's never does (RuntimeError: a bug)."""
    retracted = any(kinds[k] for k in RETRACTS)
    if retracted and append_only(plan):
        raise RuntimeError("an append-only query's changelog retracts a row")
    return retracted
