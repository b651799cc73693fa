"""CSV output in Flink's rendering: header row, NULL as an empty field, timestamps
``YYYY-MM-DD HH:MM:SS.fff`` with the type's fraction digits, TIME ``HH:MM:SS[.f]``, doubles as
Java prints them (``20.0``), decimals at their scale, ``[1, NULL]`` for an ARRAY, ``{a=1, b=2}``
for a MAP (in its keys' order), ``(a, 1)`` for a ROW (a NULL inside them is ``NULL``). A
scheduled run's results may instead be Parquet (``write_result``)."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame, Observation, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from operators_lib.changelog import ADDS, KINDS, RETRACTS
from operators_lib.errors import StateError
from operators_lib.io import storage
from operators_lib.io.storage import Place
from operators_lib.plan import EMIT_TS, LINE, MARKERS, OP, ROWNUM, SEQ, quote
from operators_lib.types import FlinkType

# A field is quoted when it holds a delimiter, a quote or a line break (RFC 4180; Python's csv
# module leaves a bare carriage return unquoted, which its own reader then breaks a line at).
_NEEDS_QUOTES = r'[,"\r\n]'


def csv_text(c: Column, t: FlinkType | None) -> Column:
    """A value as Flink prints it (NULL stays NULL), computed by Spark: DOUBLE and FLOAT by
    the JVM's ``toString`` (Spark's cast), as Flink prints them."""
    if t is None or t.name in ("STRING", "DATE") or t.is_integral or t.is_floating \
            or t.name == "DECIMAL":  # Spark's cast: plain decimals at their scale
        return c.cast("string")
    if t.name == "BOOLEAN":
        return F.upper(c.cast("string"))
    if t.is_timestamp:  # %Y would not pad years before 1000 to four digits; yyyy does
        return F.date_format(c, "yyyy-MM-dd HH:mm:ss" + ("." + "S" * t.precision
                                                          if t.precision else ""))
    if t.name == "TIME":
        # Flink prints a TIME(p > 0) with its milliseconds' trailing zeros cut, at least one
        # digit (10:11:12.5, 10:11:12.05, 10:11:12.0); Spark's cast cuts them all.
        text = c.cast("string")
        if not t.precision:
            return F.substring(text, 1, 8)
        return F.when(F.instr(text, ".") > 0, text).otherwise(F.concat(text, F.lit(".0")))
    if t.name == "ARRAY":
        return F.concat(F.lit("["), F.array_join(F.transform(
            c, lambda e: _nested_part(e, t.args[0])), ", "), F.lit("]"))
    if t.name == "MAP":  # in its keys' order
        return F.concat(F.lit("{"), F.array_join(F.transform(
            F.map_entries(c), lambda e: F.concat(_nested_part(e["key"], t.args[0]), F.lit("="),
                                                 _nested_part(e["value"], t.args[1]))), ", "),
            F.lit("}"))
    if t.name == "ROW":
        fields = [_nested_part(c[f"f{i}"], a) for i, a in enumerate(t.args)]
        return F.when(c.isNotNull(), F.concat(F.lit("("), F.concat_ws(", ", *fields),
                                              F.lit(")")))
    raise ValueError(f"no CSV rendering for {t.sql()}")  # a bug: types.py names every type


def _nested_part(c: Column, t: FlinkType) -> Column:
    """An element of an ARRAY, MAP or ROW: a NULL inside them is ``NULL``."""
    return F.when(c.isNull(), F.lit("NULL")).otherwise(csv_text(c, t))


def csv_line(fields: list[tuple[Column, FlinkType | None]]) -> Column:
    """One CSV line (with its newline) of Flink-printed values: NULL as an empty field, quoted
    where needed; a line of one empty field is ``""`` (else it would read as no row)."""
    texts = []
    for c, t in fields:
        text = F.coalesce(csv_text(c, t), F.lit(""))
        if t is None or t.name == "STRING" or t.name in ("ARRAY", "MAP", "ROW"):
            text = F.when(text.rlike(_NEEDS_QUOTES), F.concat(
                F.lit('"'), F.replace(text, F.lit('"'), F.lit('""')), F.lit('"'))).otherwise(text)
        texts.append(text)
    line = texts[0] if len(texts) == 1 else F.concat_ws(",", *texts)
    if len(texts) == 1:
        line = F.when(line == "", F.lit('""')).otherwise(line)
    return F.concat(line, F.lit("\n"))


@contextmanager
def replacing(targets: list[tuple[Place, list[str] | None]], mode: int | None = None
              ) -> Iterator[list[BinaryIO]]:
    """Files written whole (storage.writing): ``targets`` (place, CSV header or None), each
    opened behind its header."""
    with storage.writing([target for target, _ in targets], mode) as outs:
        for out, (_, head) in zip(outs, targets):
            if head is not None:
                out.write(_header_line(head))
        yield outs


def write_text(path: Path, text: str) -> None:
    """A text file written atomically (``replacing``)."""
    with replacing([(path, None)]) as (out,):
        out.write(text.encode())


def write_json(path: Path, data: dict) -> None:
    """A JSON file written atomically (``replacing``)."""
    write_text(path, json.dumps(data, indent=2, default=str) + "\n")


def write_header(path: Path, names: list[str]) -> None:
    """A CSV file of a header only, written atomically (``replacing``)."""
    with replacing([(path, names)]):
        pass


# Parquet's writer buffers a row group in the JVM's heap and checks its size every
# ``row.check.min`` values: both kept small, so that a writer holds a few MB, not 128 MB (with
# a 256 MB driver heap that was an OOM).
_TEXT_PARTS = {"compression": "none", "parquet.block.size": str(8 << 20),
               "parquet.page.size.row.check.min": "4", "parquet.page.size.row.check.max": "16"}


def write_csv_frame(df: DataFrame, path: Path, types: dict[str, FlinkType], columns: list[str],
                    header: list[str] | None = None, order: list[Column | str] | None = None,
                    keep: Column | None = None, metrics: list[Column] | None = None,
                    also: tuple[tuple[Path, list[str]], ...] = ()) -> dict[str, int | None]:
    """A DataFrame as a CSV file in Flink's rendering, formatted by Spark on the executors
    (``csv_line``, no Python per row): each row's line is a value of Parquet parts, joined
    behind the header into ``path`` in ``order`` (Spark's sort leaves its ranges in partition
    order), a byte copy on the driver. Written atomically (``replacing``). ``also``: more files
    (path, columns) written from the same rows in the same order by the same job. Returns the
    rows written (``rows``) and ``metrics`` (named aggregates over ``df``), observed by that
    job; ``keep``: the rows to write."""
    files = [(path, columns, header or columns), *[(p, c, c) for p, c in also]]
    seen, written = Observation(), Observation()
    # Observed above the sort: its sampling job (range partitioning) would count rows twice.
    rows = df.orderBy(*order) if order else df
    if metrics:
        rows = rows.observe(seen, *metrics)
    names = [f"f{i}" for i in range(len(files))]
    rows = (rows if keep is None else rows.where(keep)).observe(
        written, F.count(F.lit(1)).alias("rows")).select(
        *[csv_line([(F.col(c), types.get(c)) for c in cols]).alias(n)
          for n, (_, cols, _) in zip(names, files)])
    parts = path.parent / f".{path.name}.parts"
    storage.rmtree(parts)
    rows.write.options(**_TEXT_PARTS).parquet(str(parts))
    with replacing([(target, head) for target, _, head in files]) as outs:
        for name, out in zip(names, outs):
            for part in sorted(parts.glob("part-*")):
                # A row group (8 MB) at a time, its text copied from Arrow's buffer (no Python
                # string), the memory handed back after each: the driver does not grow
                # with the output (read as Python strings, it grew by 300 MB for a 534 MB
                # batch.csv).
                with storage.open_input(part) as fh, pq.ParquetFile(fh) as texts_of_part:
                    for group in range(texts_of_part.num_row_groups):
                        for text in texts_of_part.read_row_group(
                                group, columns=[name]).column(0).chunks:
                            if len(text):
                                out.write(_utf8_bytes(text))
                        pa.default_memory_pool().release_unused()
    storage.rmtree(parts)
    return {**(seen.get if metrics else {}), **written.get}


def write_result(df: DataFrame, base: Place, fmt: str, types: dict[str, FlinkType],
                 columns: list[str], order: list[Column | str] | None = None) -> int:
    """A scheduled run's result ``df`` in its publishing format (``fmt``): ``<base>.csv``
    (``write_csv_frame``), or ``<base>.parquet/``, a directory of Parquet files with the
    columns' Spark types, written by the executors in ``order`` across its files and whole
    (storage.whole_dir, Spark's ``_SUCCESS`` last). Returns the rows written."""
    if fmt == "csv":
        return write_csv_frame(df, base.with_name(f"{base.name}.csv"), types, columns,
                               order=order)["rows"]
    written = Observation()
    # observed above the sort (its sampling job would count the rows twice)
    rows = (df.orderBy(*order) if order else df).observe(written, F.count(F.lit(1)).alias("rows"))
    with storage.whole_dir(base.with_name(f"{base.name}.parquet"), "_SUCCESS") as target:
        rows.select(
            *[F.col(quote(c)) for c in columns]).write.parquet(str(target))
    return written.get["rows"]


def read_csv_frame(spark: SparkSession, path: Path, columns: list[tuple[str, str]]
                   ) -> DataFrame:
    """A CSV file ``write_csv_frame`` wrote, read back by the executors with its columns'
    types (SQL text, as the reports list them): numbers, booleans, dates and timestamps as
    Spark values (Flink's rendering is what Spark's casts read), TIME and nested values
    (ARRAY, MAP, ROW) as their text. An empty field is NULL."""
    text = spark.read.options(header=True, multiLine=True, escape='"', mode="FAILFAST").schema(
        T.StructType([T.StructField(name, T.StringType()) for name, _ in columns])).csv(str(path))
    return text.select(*[(F.col(quote(name)).cast(t.spark()) if t else F.col(quote(name)))
                         .alias(name) for name, t in ((n, _scalar(t)) for n, t in columns)])


def _scalar(type_text: str) -> FlinkType | None:
    """A column's type where Spark's cast reads Flink's rendering of it; None: read as text."""
    try:
        t = FlinkType.parse(type_text)
    except ValueError:  # ARRAY<..>, MAP<..>, ROW<..>: their text
        return None
    return t if t.is_numeric or t.is_timestamp or t.name in ("BOOLEAN", "DATE") else None


def changelog_line(fields: list[tuple[str, FlinkType]]) -> Column:
    """A changelog row's result columns as its CSV line (``csv_line``), NULL for a marker row:
    the stream's sink writes it beside the row (stream/runner.py), ``copy_changelog`` copies
    it."""
    return F.when(~F.col(OP).isin(*MARKERS), csv_line([(F.col(n), t) for n, t in fields]))


# The order of a micro-batch's changelog parts (stream/runner.py) and of their merge here.
_PART_ORDER = (EMIT_TS, ROWNUM, SEQ)
_READ_ROWS = 1 << 16


def copy_changelog(batches: list[Path], changes: tuple[Path, list[str]] | None,
                   added: tuple[Path, list[str]] | None = None) -> dict[str, int]:
    """The changelog of the micro-batch directories ``batches`` (stream/runner.py's, in batch
    order) as CSV files, in ``plan.PLACE`` order without a Spark job: a micro-batch's parts are
    each sorted by (``EMIT_TS``, ``ROWNUM``, ``SEQ``), so the driver merges them as it copies,
    a few thousand rows of each part at a time (the rows' text is copied from Arrow's buffers,
    as ``write_csv_frame`` copies its parts). ``changes`` (path, header): a line per row, its
    kind then its ``LINE``; ``added``: the added rows' lines up to the first retraction (the
    result, where nothing is retracted: an append-only one, or an updating one whose rows were
    never updated). Marker rows are counted, not written. Written atomically. Returns the rows
    of each kind and marker, and the rows that are not markers (``rows``). StateError if a part
    has no ``LINE`` (a changelog of another layout)."""
    counts: Counter = Counter()
    with replacing([t for t in (changes, added) if t]) as outs:
        for batch in batches:
            for rows in _merged(sorted(batch.glob("part-*"))):
                for kind in pc.value_counts(rows.column(OP)).to_pylist():
                    counts[kind["values"]] += kind["counts"]
                rows = rows.filter(pc.is_valid(rows.column(LINE)))
                if not rows.num_rows:
                    continue
                counts["rows"] += rows.num_rows
                kind, line = rows.column(OP), rows.column(LINE)
                if changes:
                    outs[0].write(_utf8_bytes(pc.binary_join_element_wise(kind, line, ",")))
                if added and not any(counts[k] for k in RETRACTS):
                    outs[-1].write(_utf8_bytes(line.filter(pc.is_in(kind, pa.array(ADDS)))))
            pa.default_memory_pool().release_unused()
    return {**{k: counts[k] for k in (*KINDS, *MARKERS)}, "rows": counts["rows"]}


def _merged(parts: list[Place]) -> Iterator[pa.RecordBatch]:
    """The rows (``OP``, ``LINE``) of parts each sorted by ``_PART_ORDER``, in that order: of
    what each part has read, the rows up to the smallest of their last keys are taken, sorted
    and given out; a part that has given out all it read reads on."""
    readers = []
    for part in parts:
        f = pq.ParquetFile(storage.open_input(part))
        if LINE not in f.schema_arrow.names:
            raise StateError(f"{part} has no {LINE} column: a changelog of an earlier layout")
        readers.append(f.iter_batches(_READ_ROWS, columns=[*_PART_ORDER, OP, LINE]))
    held: list[pa.RecordBatch | None] = [None] * len(readers)
    while True:
        for i, reader in enumerate(readers):
            if reader is not None and (held[i] is None or not held[i].num_rows):
                held[i] = next(reader, None)
                if held[i] is None:
                    readers[i] = None
        live = [b for b in held if b is not None and b.num_rows]
        if not live:
            return
        # Parts still reading bound what may go out: rows up to the least of their last keys.
        bound = min((_keys(b, b.num_rows - 1) for i, b in enumerate(held)
                     if b is not None and b.num_rows and readers[i] is not None), default=None)
        taken = []
        for i, b in enumerate(held):
            if b is None or not b.num_rows:
                continue
            n = b.num_rows if bound is None else _count_upto(b, bound)
            taken.append(b.slice(0, n))
            held[i] = b.slice(n)
        rows = pa.Table.from_batches(taken).combine_chunks()
        if len(taken) > 1:
            keys = [_key_array(rows.column(c)) for c in reversed(_PART_ORDER)]
            rows = rows.take(np.lexsort(keys))
        yield from rows.select([OP, LINE]).to_batches()


def _key_array(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """A key column as int64, NULL first (Spark's ascending order)."""
    return pc.fill_null(column, np.iinfo(np.int64).min).to_numpy()


def _keys(batch: pa.RecordBatch, i: int) -> tuple[int, ...]:
    return tuple(_key_array(batch.column(c).slice(i, 1))[0] for c in _PART_ORDER)


def _count_upto(batch: pa.RecordBatch, bound: tuple[int, ...]) -> int:
    """How many of ``batch``'s rows (sorted by ``_PART_ORDER``) have keys <= ``bound``."""
    e, r, s = (_key_array(batch.column(c)) for c in _PART_ORDER)
    be, br, bs = bound
    upto = (e < be) | ((e == be) & ((r < br) | ((r == br) & (s <= bs))))
    return int(upto.sum())


def _utf8_bytes(texts: pa.StringArray) -> memoryview:
    """The values of a string array without NULLs, concatenated: its data buffer's slice."""
    offsets = np.frombuffer(texts.buffers()[1], np.int32)[texts.offset:]
    return memoryview(texts.buffers()[2])[offsets[0]:offsets[len(texts)]]


def _header_line(names: list[str]) -> bytes:
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerow(names)
    return text.getvalue().encode()

