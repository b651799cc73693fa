"""How a stream query runs: its sources, its stateful processors and its run to completion.

``SparkRuntime`` is Structured Streaming: a file source per table admitting one staged file per
micro-batch, in the order of its offer log (io/offers.py), each stateful processor on
``transformWithStateInPandas``, and an ``availableNow`` run to completion. The stream planner
builds every query through a runtime, so the operator harness of the tests (tests/harness.py)
can run the same plan and processors micro-batch by micro-batch in memory.

The sink is Spark's writer on the executors: each micro-batch's changelog goes to
``<changelog_dir>/batch-<id>/`` (Parquet parts and ``_SUCCESS``); nothing passes through the
driver. Each row carries its micro-batch (``BATCH``) and its position in the operator's output
(``SEQ``, Spark's partition and row): ordered by ``plan.PLACE`` the changelog is in emission
order. Each part is sorted by the rest of that order (``EMIT_TS``, ``ROWNUM``, ``SEQ``), and
the rows carry their CSV line where the stream renders one (``LINE``: lifecycle.stream), so
that changelog.csv is a merge of the parts as they are (output.copy_changelog), not a sort of
the whole changelog. Writing by batch id (overwrite) makes a replayed batch (after a failure
between the write and Spark's commit) replace its own output: exactly-once. Every batch writes
its directory, even without rows: ``changelog_files`` then checks them against the batches the
checkpoint committed, so a missing segment is an error, not a wrong result.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from operators_lib.catalog import TableDef
from operators_lib.engine.spark import session_conf
from operators_lib.errors import StateError
from operators_lib.plan import BATCH, EMIT_TS, END_FIRST, ROWNUM, SEQ
from operators_lib.scan import staged_schema
from operators_lib.stream.packing import PACKED, pack, unpacked
from operators_lib.stream.protocol import Processor
from operators_lib.stream.rows import BUCKET

# A directory per micro-batch, written by the executors; /3: its parts sorted, with LINE.
CHANGELOG_LAYOUT = "changelog/3"
_WM = "tw__wm"
# Event time of the end-of-input marker: year 148110, past every TIMESTAMP (they end in 9999)
# by more than any watermark delay, within Spark's timestamps (294247) and int64 milliseconds.
END_OF_INPUT_US = 2**62

_EXCLUDED_RULES = "spark.sql.optimizer.excludedRules"
_PUSH_DOWN = ",".join(f"org.apache.spark.sql.catalyst.optimizer.{r}" for r in (
    "PushDownPredicates", "PushPredicateThroughNonJoin"))


@dataclass
class StreamRun:
    micro_batches: int
    seconds: float
    progress: list[dict] = field(default_factory=list)


class SparkRuntime:
    """Structured Streaming (the product's stream mode)."""

    # A stateless per-micro-batch stage (the TopN pre-filter) may run before a processor.
    per_batch_stages = True

    def source(self, spark: SparkSession, table: TableDef, path: Path,
               processing_time: bool = False) -> DataFrame:
        """A table's staged files, one per micro-batch, as offered (io/offers.py). The
        watermark is Spark's (max event time seen in earlier micro-batches minus the WATERMARK
        delay), tracked on a copy of the rowtime column so that Spark itself drops nothing: the
        operators decide lateness with Flink's rules and report late rows instead of losing
        them silently.

        ``processing_time`` (a query with processing-time windows): the watermark is the
        processing time of the previous micro-batch instead (its ``current_timestamp()``, the
        PROCTIME() of its rows), so windows fire as processing time passes them, with Spark's
        event-time timers (its processing-time timers would keep an availableNow run going).
        Such a query has no event-time operator (the planner refuses any operator over a
        window's result but window TopN and joins, and refuses those over processing time)."""
        df = (spark.readStream.schema(staged_schema(table))
              .option("maxFilesPerTrigger", 1).option("maxFileAge", "36500d")
              .parquet(str(path)))
        wm = table.watermark
        if wm or processing_time:
            # The end-of-input markers (tw__rownum -1 and plan.END_FIRST's, no data) count as
            # an event time past every valid one: the watermark then passes all data, as
            # Flink's at end of input.
            ended = (F.col(ROWNUM) == -1) | (F.col(ROWNUM) <= END_FIRST)
            time = F.when(ended, F.timestamp_micros(F.lit(END_OF_INPUT_US))) \
                .otherwise(F.current_timestamp() if processing_time else F.col(wm.column))
            delay = 0 if processing_time else wm.delay_ms
            df = df.withColumn(_WM, time).withWatermark(_WM, f"{delay} milliseconds").drop(_WM)
        return df

    def apply(self, df: DataFrame, keys: list[str], processor: Processor,
              schema: T.StructType, time_mode: str) -> DataFrame:
        """``processor`` over ``df`` grouped by ``keys`` (time mode "None" or "EventTime");
        grouped by bucket, its rows packed per bucket, and an Arrow processor's output too
        (stream/packing.py)."""
        if keys == [BUCKET]:
            df = pack(df, BUCKET)
        if processor.arrow:
            return unpacked(df.groupBy(*keys).transformWithStateInPandas(
                processor, PACKED, "Append", time_mode), schema)
        return df.groupBy(*keys).transformWithStateInPandas(processor, schema, "Append",
                                                            time_mode)

    def run(self, df: DataFrame, checkpoint: Path, changelog_dir: Path,
            on_progress: Callable[[dict], None] | None = None) -> StreamRun:
        return run_available_now(df, checkpoint, changelog_dir, on_progress)


SPARK = SparkRuntime()


def run_available_now(df: DataFrame, checkpoint: Path, changelog_dir: Path,
                      on_progress: Callable[[dict], None] | None = None) -> StreamRun:
    """Run to the end of the available input. ``on_progress`` is called (in this thread) with
    the query's progress of each micro-batch it sees: polled once a second, so a fast run may
    skip some."""
    changelog_dir.mkdir(parents=True, exist_ok=True)

    def sink(batch: DataFrame, batch_id: int) -> None:
        write_changelog_batch(batch.where(f"{ROWNUM} >= 0"), changelog_dir, batch_id)

    start = time.perf_counter()
    # Spark pushes filters below the watermark operator; then rows a WHERE drops (and the
    # end-of-input marker) would not advance the watermark. Flink assigns watermarks at the
    # source, before any filter: keep that order for the streaming query.
    with session_conf(df.sparkSession, {_EXCLUDED_RULES: _PUSH_DOWN}):
        query = (df.writeStream.foreachBatch(sink).trigger(availableNow=True)
                 .option("checkpointLocation", str(checkpoint)).start())
        if on_progress is None:
            query.awaitTermination()
        else:
            _poll(query, on_progress)
    seconds = time.perf_counter() - start
    progress = [p for p in query.recentProgress if p]
    batches = len({p["batchId"] for p in progress})
    return StreamRun(batches, seconds, progress)


def write_changelog_batch(rows: DataFrame, changelog_dir: Path, batch_id: int) -> None:
    """One micro-batch's changelog, written by the executors (module docstring)."""
    rows.select("*", F.lit(batch_id).cast("long").alias(BATCH),
                F.monotonically_increasing_id().alias(SEQ)) \
        .sortWithinPartitions(EMIT_TS, ROWNUM, SEQ) \
        .write.mode("overwrite").parquet(str(batch_dir(changelog_dir, batch_id)))


def batch_dir(changelog_dir: Path, batch_id: int) -> Path:
    return changelog_dir / f"batch-{batch_id:08d}"


def _poll(query, on_progress: Callable[[dict], None]) -> None:
    # One lastProgress call a second: a StreamingQueryListener would convert every micro-batch's
    # progress through py4j, at a cost that grows with the number of micro-batches.
    seen = None
    while not query.awaitTermination(1):
        progress = query.lastProgress
        if progress and progress["batchId"] != seen:
            seen = progress["batchId"]
            on_progress(progress)


def changelog_frame(spark: SparkSession, changelog_dir: Path, checkpoint: Path,
                    first: int = 0, upto: int | None = None) -> DataFrame | None:
    """The changelog of the micro-batches ``first`` .. ``upto`` (default: the last) that the
    checkpoint committed, as a DataFrame the executors read (unordered: order by
    ``plan.PLACE``); None without any."""
    dirs = changelog_files(changelog_dir, checkpoint, first, upto)
    return spark.read.parquet(*map(str, dirs)) if dirs else None


def changelog_files(changelog_dir: Path, checkpoint: Path, first: int = 0,
                    upto: int | None = None) -> list[Path]:
    """The changelog directories of micro-batches ``first`` .. ``upto`` (default: the last
    committed), in batch order. StateError when a committed batch's output is missing or
    incomplete, or (reading to the last) a batch's output belongs to no committed batch: the
    state is damaged and no result may be computed from it."""
    if any(changelog_dir.glob("batch-*.parquet")):
        raise StateError(f"{changelog_dir} holds a changelog written by an earlier version of "
                         "twinflow (one file per micro-batch): start the query's state afresh")
    dirs = {int(d.name.removeprefix("batch-")): d for d in changelog_dir.glob("batch-*")
            if d.is_dir()}
    committed = range(last_commit(checkpoint) + 1)
    missing = [b for b in committed if b not in dirs or not (dirs[b] / "_SUCCESS").exists()]
    # Up to a given batch, later output is not read: it may be a running stream's.
    stray = sorted(set(dirs) - set(committed)) if upto is None else []
    if missing or stray:
        problems = []
        if missing:
            problems.append(f"the changelog of micro-batch(es) {_ids(missing)} is missing from "
                            f"{changelog_dir} (the checkpoint {checkpoint} committed batches "
                            f"0..{len(committed) - 1})")
        if stray:
            problems.append(f"{changelog_dir} holds micro-batch(es) {_ids(stray)} that the "
                            f"checkpoint {checkpoint} never committed")
        raise StateError("the stream's state is damaged: " + "; ".join(problems))
    return [dirs[b] for b in committed if b >= first and (upto is None or b <= upto)]


def last_commit(checkpoint: Path) -> int:
    """The id of the last micro-batch the checkpoint committed; -1 for none (Spark writes
    ``commits/<id>`` once a batch's output is complete and drops the oldest ones)."""
    return _last_id(checkpoint / "commits")


def last_planned(checkpoint: Path) -> int:
    """The id of the last micro-batch the checkpoint planned (its offsets written, committed
    or not); -1 for none."""
    return _last_id(checkpoint / "offsets")


def _last_id(log: Path) -> int:
    """The highest batch id in one of the checkpoint's logs (offsets, commits); -1: none."""
    return max((int(f.name) for f in log.glob("*") if f.name.isdigit()), default=-1)


def batch_metadata(checkpoint: Path, batch: int) -> dict:
    """What Spark recorded of a planned micro-batch: its watermark, time and settings."""
    return json.loads((checkpoint / "offsets" / str(batch)).read_text().splitlines()[1])


def source_logs(checkpoint: Path) -> list[Path]:
    """The sources' logs of the files each micro-batch read (``sources/<i>/<batch>`` and
    their compactions)."""
    return [log for log in (checkpoint / "sources").glob("*/*")
            if log.name.split(".")[0].isdigit()]


def checkpoint_shuffle_partitions(checkpoint: Path) -> int | None:
    """The shuffle partitions a checkpoint's state was written with (Spark keeps using them
    when the query resumes, whatever the session sets); None without a micro-batch yet."""
    last = last_planned(checkpoint)
    if last < 0:
        return None
    value = batch_metadata(checkpoint, last).get("conf", {}).get("spark.sql.shuffle.partitions")
    return None if value is None else int(value)


def _ids(ids: list[int]) -> str:
    return ", ".join(map(str, ids[:10])) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
