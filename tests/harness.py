"""The operator harness: a query's stream mode run micro-batch by micro-batch in memory.

In the spirit of Flink's ``*TestHarness`` and pyspark's ``TwsTester``: the same plan, the same
stateful processors, the same per-key calls, watermarks and event-time timers as under
Structured Streaming, but no streaming query. Every stateful processor runs in this process
over an in-memory state handle (tests/memory_state.py); the stateless parts of the
plan run as Spark batch jobs over all micro-batches at once, each row carrying its micro-batch
id (``plan.BATCH``). A case of 40 micro-batches costs a few Spark jobs instead of 40 micro-batches
of a real stream (~1 s each).

What it reproduces of Spark (stream/runner.py's ``SparkRuntime``):
- micro-batch k admits the k-th staged file of every table (``maxFilesPerTrigger`` 1, files in
  modification-time order, the end-of-input marker last);
- the watermark of micro-batch k: per table, the largest event time of micro-batches < k minus
  the WATERMARK delay; over tables, the smallest of those that have seen a row; never going back;
- per micro-batch and processor: ``handleInputRows`` once per grouping key with rows, keys in
  order, then ``handleExpiredTimer`` for every event-time timer at or before the watermark, by
  expiry time; Spark deletes a timer once it has fired;
- after the last micro-batch, one micro-batch without data when an event-time processor is in
  the plan and the watermark moved;
- the sink: one changelog file per micro-batch, rows ordered by emission time and arrival,
  and the micro-batch's commit in the checkpoint.

What only a real stream shows (checkpoints and restarts, processing time, state TTL, the TopN
pre-filter's per-micro-batch stage, Spark's own shuffle order) stays with the Structured
Streaming tests; ``HarnessRuntime`` refuses plans that need it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.streaming import StatefulProcessor
from pyspark.sql.streaming.stateful_processor import ExpiredTimerInfo, TimerValues

from operators_lib.catalog import TableDef
from operators_lib.io import offers
from operators_lib.plan import BATCH, EMIT_TS, END_FIRST, OP, ROWNUM, SEQ, SWEEP_FIRST
from operators_lib.scan import staged_schema
from operators_lib.stream import packing
from operators_lib.stream.event_time import TIME_MS
from operators_lib.stream.join import SIDE
from operators_lib.stream.rows import BUCKET, NOW, SLOT, key_names
from operators_lib.stream.runner import END_OF_INPUT_US, StreamRun, batch_dir
from tests.memory_state import MemoryHandle

_FILE = "tw__file"
_CLOCK = 1_700_000_000_000  # the processing time the harness reports (no processor reads it)


class HarnessRuntime:
    """A ``SparkRuntime`` (stream/runner.py) whose micro-batches run in memory."""

    per_batch_stages = False  # everything stateless runs over all micro-batches at once

    def __init__(self) -> None:
        self.tables: list[tuple[TableDef, list[int | None]]] = []  # max event time per file
        self.batches = 0
        self.event_time = False  # an event-time processor is in the plan

    # -- sources and watermarks ------------------------------------------------------------
    def source(self, spark: SparkSession, table: TableDef, path: Path,
               processing_time: bool = False) -> DataFrame:
        if processing_time:
            raise ValueError("harness: processing-time windows run on Structured Streaming "
                             "(the harness has no per-micro-batch processing time)")
        files = offers.offered(path)
        if not files:
            raise ValueError(f"harness: no staged files in {path}")
        times = []
        for f in files:
            times.append(_max_event_time(f, table) if table.watermark else None)
        self.tables.append((table, times))
        self.batches = max(self.batches, len(files))
        index = F.create_map(*[x for k, f in enumerate(files) for x in (F.lit(f.name), F.lit(k))])
        return (spark.read.schema(staged_schema(table)).parquet(*map(str, files))
                .withColumn(_FILE, F.regexp_extract(F.input_file_name(), r"([^/]+)$", 1))
                .withColumn(BATCH, index[F.col(_FILE)]).drop(_FILE))

    def watermarks(self) -> list[int]:
        """The watermark in force in each micro-batch, and in a last one without data (0: none
        yet, as Spark reports it)."""
        seen: dict[str, int] = {}
        out, current = [], 0
        for k in range(self.batches + 1):
            out.append(current)
            for table, times in self.tables:
                if table.watermark and k < len(times) and times[k] is not None:
                    wm = times[k] - table.watermark.delay_ms
                    seen[table.name] = max(seen.get(table.name, wm), wm)
            if seen:
                current = max(current, min(seen.values()))
        return out

    def micro_batches(self) -> int:
        wms = self.watermarks()
        return self.batches + (1 if self.event_time and wms[-1] > wms[-2] else 0)

    # -- processors ------------------------------------------------------------------------
    def apply(self, df: DataFrame, keys: list[str], processor: StatefulProcessor,
              schema: T.StructType, time_mode: str) -> DataFrame:
        spark = df.sparkSession
        if time_mode == "EventTime":
            self.event_time = True
        rows = df.toArrow()
        wms = self.watermarks()
        batches = [(rows.filter(pc.equal(rows[BATCH], k)).drop_columns([BATCH]),
                    wms[k]) for k in range(self.micro_batches())]
        out = []
        for k, frame in enumerate(feed(processor, keys, batches, time_mode)):
            if len(frame):
                frame[BATCH] = k
                out.append(frame)
        schema = T.StructType([*schema.fields, T.StructField(BATCH, T.IntegerType())])
        if not out:
            return spark.createDataFrame([], schema)
        result = pd.concat(out, ignore_index=True)[[f.name for f in schema.fields]]
        return spark.createDataFrame(result.where(result.notna(), None), schema)

    # -- the run ---------------------------------------------------------------------------
    def run(self, df: DataFrame, checkpoint: Path, changelog_dir: Path,
            on_progress: Callable[[dict], None] | None = None) -> StreamRun:
        """The sink of stream/runner.py: each micro-batch's changelog in its directory, and a
        commit for each in the checkpoint, as changelog_files checks them."""
        start = time.perf_counter()
        changelog_dir.mkdir(parents=True, exist_ok=True)
        (checkpoint / "commits").mkdir(parents=True, exist_ok=True)
        table = df.where(f"{ROWNUM} >= 0").toArrow()
        batches = self.micro_batches()
        for k in range(batches):
            _write_batch(table.filter(pc.equal(table[BATCH], k)), changelog_dir, k)
            (checkpoint / "commits" / str(k)).touch()
        wms = self.watermarks()
        progress = [{"batchId": k, "eventTime": {"watermark": wms[k]}}
                    for k in range(batches)]
        return StreamRun(batches, time.perf_counter() - start, progress)


def _write_batch(table: pa.Table, changelog_dir: Path, batch_id: int) -> None:
    """What runner.write_changelog_batch writes, from the driver: ``SEQ`` the emission order,
    the part sorted as Spark's."""
    out = batch_dir(changelog_dir, batch_id)
    out.mkdir(parents=True, exist_ok=True)
    table = table.set_column(table.schema.get_field_index(BATCH), BATCH,
                             table[BATCH].cast(pa.int64()))
    table = table.append_column(SEQ, pa.array(range(len(table)), pa.int64()))
    pq.write_table(table.sort_by([(c, "ascending", "at_start") for c in (EMIT_TS, ROWNUM, SEQ)]),
                   out / "part-00000.parquet")
    (out / "_SUCCESS").touch()


def _max_event_time(path: Path, table: TableDef) -> int | None:
    """The largest event time (epoch ms) in a staged file, an end-of-input marker's (a row
    without data, tw__rownum -1 or plan.END_FIRST's) past every valid one, as
    SparkRuntime.source gives it."""
    data = pq.read_table(path, columns=[table.watermark.column, ROWNUM])
    if pc.any(pc.or_(pc.equal(data[ROWNUM], -1),
                     pc.less_equal(data[ROWNUM], END_FIRST))).as_py():
        return END_OF_INPUT_US // 1000
    peak = pc.max(data.column(0).cast(pa.int64())).as_py()  # microseconds
    return None if peak is None else peak // 1000


def feed(processor: StatefulProcessor, keys: list[str],
         batches: list[tuple[pd.DataFrame | pa.Table | None, int]], time_mode: str = "None"
         ) -> list[pd.DataFrame]:
    """Rows and watermarks in, changelog out: ``processor`` over micro-batches of (rows or
    None, watermark in force), with in-memory state, called as Spark calls it (module
    docstring). Rows given as Arrow reach each key as pyspark converts them, one key's rows
    at a time (an integer column with a NULL among them arrives as float64). Returns each
    micro-batch's output rows in emission order."""
    handle = MemoryHandle(time_mode)
    processor.init(handle)
    arrow = getattr(processor, "arrow", False)  # rows in and out packed (stream/packing.py)
    out = []
    for rows, wm in batches:
        handle.watermark = wm
        values = TimerValues(_CLOCK, wm)
        frames: list[pd.DataFrame] = []
        if rows is not None and len(rows):
            index = rows.select(keys).to_pandas() if isinstance(rows, pa.Table) else rows
            for key, group in index.groupby(keys, sort=True, dropna=False):
                key = key if isinstance(key, tuple) else (key,)
                handle.key = key
                if arrow:  # packed, as the stream packs an Arrow processor's rows
                    group = packing.frame(rows.take(group.index.to_numpy()) if isinstance(
                        rows, pa.Table) else pa.Table.from_pandas(group, preserve_index=False))
                elif isinstance(rows, pa.Table):
                    group = rows.take(group.index.to_numpy()).to_pandas()
                frames += processor.handleInputRows(
                    key, iter([group.reset_index(drop=True)]), values)
        if time_mode == "EventTime":
            for t, key in handle.due():
                handle.key = key
                frames += processor.handleExpiredTimer(key, values, ExpiredTimerInfo(t))
        if arrow:
            frames = [packing.unpack(f) for f in frames]
        # As objects: a marker frame's all-NULL columns must not decide a column's type.
        frames = [f.astype(object) for f in frames if len(f)]
        out.append(pd.concat(frames, ignore_index=True) if frames else pd.DataFrame())
    processor.close()
    return out


# -- rows for the processors' unit tests -------------------------------------------------
# A processor's input as the stream planner shapes it (stream/planner.py): the data columns,
# the row kind, the arrival number and what the operator needs (its key's grouping columns,
# state slot and bucket, event time, join side, TTL clock), built here, not by hand.
Values = list | pd.Series | int | str | None  # a column's values, or one value for every row
_PER_ROW = (list, pd.Series)


def key_columns(n: int = 1) -> list[str]:
    """The grouping columns of an operator key of ``n`` columns (rows.key_names)."""
    return [c for i in range(n) for c in key_names(i)]


def changes(ops: str | list[str] | None, first: int = 0, *, key: list | None = None,
            times: list[int] | None = None, slot: Values = 0, bucket: Values = None,
            side: Values = None, now: int | None = None, **cols: Values) -> pd.DataFrame:
    """Rows of kinds ``ops`` (one for all, one per row, or None: an append-only input's rows,
    without the column, as a scan gives them), arrival numbers from ``first``:
    the data ``cols``; ``key``: each row's operator key (a value, or a tuple of values per key
    column; None a NULL) as its grouping columns, with its state ``slot`` and ``bucket``;
    ``times``: event times (ms); ``side``: a join input's side (0 left, 1 right); ``now``: the
    TTL clock (ms). A changelog operator groups by the key columns (``key_columns``), an
    event-time one by data columns."""
    n = next(len(v) for v in (ops, key, times, *cols.values()) if isinstance(v, _PER_ROW))
    frame = pd.DataFrame({c: pd.Series(v).reset_index(drop=True) if isinstance(v, _PER_ROW)
                          else [v] * n for c, v in cols.items()}, index=range(n))
    if ops is not None:
        frame[OP] = ops
    frame[ROWNUM] = np.arange(first, first + n, dtype=np.int64)
    if times is not None:
        frame[TIME_MS] = np.array(times, dtype=np.int64)
    if key is not None:
        keys = [k if isinstance(k, tuple) else (k,) for k in key]
        for i, values in enumerate(zip(*keys)):
            null, value = key_names(i)
            default = _default(v for v in values if v is not None)
            frame[null] = [v is None for v in values]
            frame[value] = [default if v is None else v for v in values]
        frame[SLOT] = slot
    for column, value in ((BUCKET, bucket), (SIDE, side), (NOW, now)):
        if value is not None:
            frame[column] = value
    return frame


def rows(first: int = 0, **kw) -> pd.DataFrame:
    """An append-only input's rows (no row kind): ``changes``'s arguments."""
    return changes(None, first, **kw)


def insert(first: int = 0, **kw) -> pd.DataFrame:
    """Added rows (+I): ``changes``'s arguments."""
    n = next(len(v) for v in kw.values() if isinstance(v, _PER_ROW))
    return changes(["+I"] * n, first, **kw)


def retract(first: int = 0, op: str = "-D", **kw) -> pd.DataFrame:
    """Retracted rows (``op``: -D or -U) of rows added before: ``changes``'s arguments."""
    n = next(len(v) for v in kw.values() if isinstance(v, _PER_ROW))
    return changes([op] * n, first, **kw)


def sweep(now: int, bucket: int = 0, keys: int = 1, **cols: None) -> pd.DataFrame:
    """What a bucket receives of a state sweep (plan.SWEEP_FIRST; ingest.write_sweep): its one
    row, every column NULL (``cols``: the data columns), at TTL clock ``now``."""
    return changes("+I", SWEEP_FIRST - bucket, key=[(None,) * keys], now=now,
                   **{c: [v] for c, v in cols.items()})


def end_of_input(keys: int = 1, **cols: None) -> pd.DataFrame:
    """The end-of-input marker (ingest.write_eof: ``tw__rownum`` -1, every column NULL) as an
    operator keyed by ``keys`` columns receives it."""
    return changes("+I", -1, key=[(None,) * keys], **{c: [v] for c, v in cols.items()})


def watermark(ms: int) -> tuple[None, int]:
    """A micro-batch without rows that only moves the watermark to ``ms`` (``feed``)."""
    return None, ms


def _default(values) -> object:
    """A NULL key value's stand-in, as keying.key_default gives it for the column's type."""
    first = next(iter(values), 0)
    return "" if isinstance(first, str) else False if isinstance(first, bool) else 0
