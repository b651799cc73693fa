"""A bucketed operator's rows packed into one Arrow IPC value per bucket, in and out.

pyspark's transformWithStateInPandas hands a processor its rows through a per-row Python loop
(``itertuples``, regrouped and rebuilt into a DataFrame: about 4 s per million rows on this
machine's cores). An operator grouped by bucket (planner: ``tw__bucket``) therefore receives
its rows packed: on the executors, before the shuffle, each partition's rows are cut by bucket
and each bucket's rows become one Arrow IPC stream in a binary column (``pack``); the processor
reads them back with one Arrow-to-pandas conversion per call (``unpack``, through
``event_time.one_frame``). What crosses the shuffle and the pyspark row loop is then one row per
bucket and upstream partition (and at most every ``_PACK_ROWS`` rows), not one per input row.

A processor that works on Arrow itself (``arrow = True``: stream/over.py) also emits its rows
packed, one value per call (``frames``), unpacked on the executors after the operator
(``unpacked``): its rows never become pandas objects, and its TIMESTAMP columns cross as Arrow
timestamps (no text round trip).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

BLOB = "tw__blob"
# Rows (and bytes) an executor holds before it packs them: one partition of a micro-batch at
# most, in Arrow; a larger partition makes more than one value per bucket.
_PACK_ROWS = 1 << 20
_PACK_BYTES = 256 << 20


def pack(df: DataFrame, key: str) -> DataFrame:
    """``df`` as (``key``, ``BLOB``) rows: the rows of each value of the integer column ``key``
    in one Arrow IPC stream, per partition."""
    out = T.StructType([T.StructField(key, T.LongType()), T.StructField(BLOB, T.BinaryType())])

    def packed(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        held: list[pa.RecordBatch] = []
        rows = size = 0
        for batch in batches:
            held.append(batch)
            rows, size = rows + batch.num_rows, size + batch.nbytes
            if rows >= _PACK_ROWS or size >= _PACK_BYTES:
                yield _by_key(held, key)
                held, rows, size = [], 0, 0
        if rows:
            yield _by_key(held, key)

    return df.mapInArrow(packed, out)


def _by_key(batches: list[pa.RecordBatch], key: str) -> pa.RecordBatch:
    table = pa.Table.from_batches(batches)
    values = table.column(key).to_numpy()
    order = np.argsort(values, kind="stable")  # a bucket's rows keep their order
    table, values = table.take(order), values[order]
    firsts = np.flatnonzero(np.insert(values[1:] != values[:-1], 0, True))
    lengths = np.diff(np.append(firsts, len(values)))
    blobs = []
    for first, length in zip(firsts.tolist(), lengths.tolist()):
        blobs.append(to_ipc(table.slice(first, length)))
    return pa.RecordBatch.from_arrays([pa.array(values[firsts], pa.int64()),
                                       pa.array(blobs, pa.binary())], [key, BLOB])


def unpack(df: pd.DataFrame) -> pd.DataFrame:
    """A processor's packed input (``pack``) as the rows it holds; other input as it is."""
    if BLOB not in df.columns:
        return df
    return pa.concat_tables([from_ipc(blob) for blob in df[BLOB]]).to_pandas()


def read(rows: Iterable[pd.DataFrame]) -> pa.Table:
    """An Arrow processor's packed input of one call as one table."""
    return pa.concat_tables([from_ipc(blob) for df in rows for blob in df[BLOB]])


def frames(tables: Iterable[pa.Table | None]) -> Iterator[pd.DataFrame]:
    """An Arrow processor's output of one call as what it yields: one packed value."""
    tables = [t for t in tables if t is not None and t.num_rows]
    if tables:
        yield frame(pa.concat_tables(tables))


def frame(table: pa.Table) -> pd.DataFrame:
    """Rows as one packed value, as a processor receives or yields them."""
    return pd.DataFrame({BLOB: [to_ipc(table)]})


PACKED = T.StructType([T.StructField(BLOB, T.BinaryType())])  # an Arrow processor's output


def unpacked(df: DataFrame, schema: T.StructType) -> DataFrame:
    """An Arrow processor's output (``PACKED``) as its rows, of ``schema``."""
    arrow = to_arrow_schema(schema, timezone="UTC")

    def rows(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for blob in batch.column(0).to_pylist():
                yield from from_ipc(blob).cast(arrow).to_batches()

    return df.mapInArrow(rows, schema)


def column(table: pa.Table, name: str) -> np.ndarray:
    """A column of an Arrow processor's rows or page as numpy."""
    return table.column(name).to_numpy()


def to_ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def from_ipc(blob: bytes) -> pa.Table:
    return pa.ipc.open_stream(blob).read_all()
