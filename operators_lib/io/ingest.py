"""Read CSV inputs on the executors and stage them as micro-batch files.

Both modes read the same staged files, so batch and stream see exactly the same rows in the same
arrival order (``tw__rownum``: file order, then line). Two steps, each a Spark job; the driver
handles files, pieces and counts, never rows:

- ``parse``: the driver checks each file's header (csv_parse.read_header: a wrong header fails
  the run before any job) and splits a file larger than a piece into byte ranges; tasks scan
  the ranges for where the file may be cut (csv_split.py: a small job, only for such files).
  Then each task reads its pieces' bytes itself (no task holds more than a piece, whatever the
  file's size; a quoted file is one piece), parses them and writes, per piece, its typed rows
  as an Arrow IPC stream in the work directory and one Parquet row: its rejected rows as
  rejected.csv lines, their counts and where NaN / ±Infinity first appear. The driver reads
  back the counts.
- ``stage``: arrival numbers are the running sums of the pieces' counts. A task per micro-batch
  of N rows reads the slices of the pieces it spans, numbers them and writes the part's
  Parquet file with pyarrow; the driver moves them to ``part-000000.parquet`` ... (the stream
  admits them in that order: io/offers.py).

The rows cross no JVM and no shuffle on their way (Spark schedules the tasks and reads the
staged files): a task's pieces as a Parquet column of Spark's writer were buffered as one row
group in the JVM heap, which ran a 1 GB driver out of memory on 1.7 GB of CSV, and a shuffle
to gather each part took most of the ingest.

``write_eof`` writes ``eof.parquet``: one marker row (``tw__rownum = -1``, every column NULL)
that moves the watermark past every event time at end of input, as Flink does for bounded
input (stream/planner.py). Where the plan fires at the end of input in the micro-batch that
reads the last row (plan.ends_in_last_part), the last part also holds a marker row per bucket
(plan.END_FIRST); readers of staged parts other than the stream keep ``tw__rownum >= 0``.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
from pyspark.sql import SparkSession
from pyspark.sql.pandas.types import from_arrow_schema

from operators_lib.catalog import TableDef
from operators_lib.io import avro, csv_flink, csv_split, json_lines, remote, storage
from operators_lib.io.csv_parse import (
    Rejected,
    first_nonfinite,
    parse_records,
    physical_schema,
    rejected_csv,
)
from operators_lib.io.formats import (
    Format,
    columns_of,
    file_table,
    parquet_rows,
    partition_of,
    row_groups,
    with_partition,
)
from operators_lib.io.offers import EOF_FILE
from operators_lib.io.remote import Store
from operators_lib.io.storage import Place
from operators_lib.plan import END_FIRST, ROWNUM, SWEEP_FIRST

REJECTED_COLUMNS = ["table", "file", "line", "reason", "row"]
# A piece of a file parsed by one task (a file without quotes is cut: csv_split.py).
PIECE_BYTES = 4 << 20
# Finding where files may be cut reads each byte once (a C-speed count, ~20 ms for 40 MB): up
# to this many bytes of local files the driver reads them, _DRIVER_CHUNK at a time (it holds
# no more); a Spark job for it cost ~2 s (1M rows, 40 MB). Larger inputs, and any on a store
# (the driver reads none of their bytes: 256 KB range reads of a 170 MB file on the loopback
# S3 server took 99 s), are scanned by the executors, a piece per read.
DRIVER_SCAN_BYTES = 256 << 20
_DRIVER_CHUNK = 256 << 10
_SCANS = pa.schema([("at", pa.int64()), ("scan", pa.string())])
_PARSED = pa.schema([("table", pa.string()), ("file", pa.int32()), ("piece", pa.int32()),
                     ("rows", pa.int64()), ("rejected", pa.int64()),
                     ("nonfinite", pa.string()), ("digest", pa.string()), ("bad", pa.string())])
_WRITTEN = pa.schema([("part", pa.int64())])
# A staged part's row groups: a reader holds one's columns at once (Spark writes 128 MB).
_GROUP_BYTES = 32 << 20


@dataclass(frozen=True)
class InputFile:
    table: str  # the table's lower-case name
    index: int  # its place among the table's files (name order)
    path: Path | str  # a local path, or an S3 or HDFS URI (io/remote.py)
    names: tuple[str, ...]  # its fields' column names, lower case (formats.columns_of)
    name: str = ""  # its name under the table's input (default: the file's name)
    partition: tuple[tuple[str, str], ...] = ()  # its partition columns' values
    size: int = 0
    mtime: float = 0.0  # when it was last modified (epoch seconds)

    @property
    def key(self) -> str:
        """How the manifest names the file (a directory's files may be nested)."""
        return self.name or name_of(self.path)


@dataclass(frozen=True)
class TableInput:
    """A table's files to parse, in arrival order, their format and the directory they are
    under (their names are relative to it)."""

    table: TableDef
    files: list[Path] | list[str]
    format: Format = Format()
    root: Path | str | None = None
    stats: Mapping[Path | str, tuple[int, float]] = field(default_factory=dict)  # as listed


def name_of(location: Path | str) -> str:
    return str(location).rstrip("/").rsplit("/", 1)[-1]


def relative(location: Path | str, root: Path | str | None) -> str:
    """A file's name under its table's directory ("": none given)."""
    if root is None:
        return ""
    if isinstance(location, str):
        return location[len(str(root).rstrip("/")) + 1:]
    return str(location.relative_to(root))


@dataclass(frozen=True)
class Piece:
    table: str
    file: int
    piece: int
    rows: int
    rejected: int
    nonfinite: dict  # {column: [first NaN, first ±Infinity]} among the piece's rows
    digest: str  # SHA-256 of its bytes


@dataclass
class Parsed:
    """Input files parsed by the executors, not staged yet: per piece, a row of counts in
    ``dir``/pieces (Parquet) and its typed rows in ``dir``/rows (Arrow IPC streams)."""

    dir: Place  # absolute, as the tasks see it (not resolved: links may differ on other hosts)
    tables: dict[str, TableDef]
    files: dict[str, list[InputFile]]
    pieces: list[Piece]  # per table in arrival order

    def rows_file(self, table: str, file: int, piece: int) -> Place:
        """A piece's typed rows, as the tasks read and write them."""
        return _rows_file(self.dir, table, file, piece)

    def rows(self, key: str | None = None) -> int:
        """Accepted rows of table ``key`` (default: of all tables)."""
        return sum(p.rows for p in self.pieces if key in (None, p.table))

    def rejected(self, key: str | None = None) -> int:
        """Rejected rows of table ``key`` (default: of all tables)."""
        return sum(p.rejected for p in self.pieces if key in (None, p.table))

    def per_file(self, key: str) -> list[tuple[InputFile, int, int]]:
        """(file, accepted rows, rejected rows) of a table, in file order."""
        return [(f, sum(p.rows for p in self.pieces if p.table == key and p.file == f.index),
                 sum(p.rejected for p in self.pieces if p.table == key and p.file == f.index))
                for f in self.files[key]]

    def digest(self) -> str:
        """SHA-256 of every table's files (names and the digests of their pieces, in order),
        computed from what the tasks read: the driver reads no input byte for it."""
        h = hashlib.sha256()
        for key, files in sorted(self.files.items()):
            for f in files:
                h.update(f"{key}:{f.key}:".encode())
                h.update("".join(p.digest for p in self.pieces
                                 if p.table == key and p.file == f.index).encode())
        return h.hexdigest()

    def nonfinite(self) -> dict[str, dict[str, list[int | None]]]:
        """Per table, per FLOAT / DOUBLE column: the input position (0-based among the accepted
        rows) of its first NaN and its first ±Infinity (None: none)."""
        found: dict[str, dict[str, list[int | None]]] = {}
        offsets: dict[str, int] = {}
        for p in self.pieces:
            at = offsets.get(p.table, 0)
            for column, firsts in p.nonfinite.items():
                seen = found.setdefault(p.table, {}).setdefault(column, [None, None])
                for i, first in enumerate(firsts):
                    if seen[i] is None and first is not None:
                        seen[i] = at + first
            offsets[p.table] = at + p.rows
        return found


def parse(spark: SparkSession | None, inputs: dict[str, TableInput], work: Place,
          piece_bytes: int = PIECE_BYTES, store: Store | None = None) -> Parsed:
    """Parse the files of each table (lower-case name -> its input) on the executors into
    ``work``, in pieces of about ``piece_bytes`` (a Parquet file: its row groups). A file
    whose header or Parquet columns do not fit its table raises InputError first. ``spark``
    None: the tasks run in this process (``_in_process``). ``store``: how the driver and the
    tasks reach files on an object store (io/remote.py)."""
    files = {}
    for key, given in inputs.items():
        files[key] = []
        for i, p in enumerate(given.files):
            name = relative(p, given.root)
            size, mtime = given.stats.get(p) or remote.stat(p, store)
            files[key].append(InputFile(
                key, i, p, columns_of(given.table, given.format, p, store), name,
                partition_of(given.table, given.format, p, name or name_of(p)), size, mtime))
    tables = {key: given.table for key, given in inputs.items()}
    formats = {key: given.format for key, given in inputs.items()}
    work = work.absolute()
    storage.rmtree(work)
    table_files = [f for fs in files.values() for f in fs]
    if not table_files:
        return Parsed(work, tables, files, [])
    sizes = [f.size for f in table_files]
    # as the tasks open them
    paths = [f.path if remote.is_remote(f.path) else str(Path(f.path).resolve())
             for f in table_files]
    plans: list[list[csv_split.Piece] | None] = []
    for f, size in zip(table_files, sizes):
        fmt = formats[f.table]
        if fmt.by_row_group:  # (start, end): the row group; first_line: its first row's
            counts = row_groups(f.path, store)
            plans.append([csv_split.Piece(g, g + 1, 1 + sum(counts[:g]))
                          for g in range(len(counts))])
        else:
            plans.append([csv_split.Piece(0, size, 1)] if size <= piece_bytes
                         or not fmt.cuttable else None)
    spread = [(i, s, e) for i, size in enumerate(sizes) if plans[i] is None
              for s, e in csv_split.ranges(size, piece_bytes)]
    if spread:  # files of several ranges: where they may be cut
        def scan_at(at: int, chunk: int) -> csv_split.Scan:
            i, start, end = spread[at]
            return csv_split.joined([
                csv_split.scan_range(remote.read_range(paths[i], max(s - 1, 0), e, store), s, e)
                for s, e in csv_split.ranges(end - start, chunk, start)])

        def scan(batches):
            for batch in batches:
                for at in batch.column(0).to_pylist():
                    yield pa.RecordBatch.from_pylist([{"at": at, "scan": json.dumps(
                        scan_at(at, piece_bytes))}], _SCANS)

        on_store = any(remote.is_remote(paths[i]) for i, _, _ in spread)
        if spark is None or not on_store and sum(e - s for _, s, e in spread) <= \
                DRIVER_SCAN_BYTES:
            found = [(at, scan_at(at, _DRIVER_CHUNK)) for at in range(len(spread))]
        else:
            found = [(r["at"], csv_split.Scan(*json.loads(r["scan"]))) for r in _tasks(
                spark, len(spread)).mapInArrow(scan, from_arrow_schema(_SCANS)).collect()]
        scans: dict[int, list[csv_split.Scan]] = {}
        for at, file_scan in sorted(found):
            scans.setdefault(spread[at][0], []).append(file_scan)
        for i, file_scans in scans.items():
            if formats[table_files[i].table].cut_at_newlines:  # a quote ends within its line
                file_scans = [scan._replace(quotes=False) for scan in file_scans]
            plans[i] = csv_split.plan_pieces(sizes[i], file_scans)
    pieces = [(i, k, p) for i, plan in enumerate(plans) for k, p in enumerate(plan)]
    where = work

    def parse_pieces(batches):
        for batch in batches:
            for at in batch.column(0).to_pylist():
                i, k, piece = pieces[at]
                f, table = table_files[i], tables[table_files[i].table]
                good, bad, digest = _parse_piece(table, formats[f.table], f, paths[i], k,
                                                 piece, store)
                _write_rows(_rows_file(where, f.table, f.index, k), good)
                yield pa.RecordBatch.from_pylist([{
                    "table": f.table, "file": f.index, "piece": k,
                    "rows": good.num_rows, "rejected": len(bad),
                    "nonfinite": json.dumps(first_nonfinite(table, good)), "digest": digest,
                    "bad": rejected_csv(table.name, str(f.path), bad)}], _PARSED)

    if spark is None:
        (work / "pieces").mkdir(parents=True)
        with storage.open_output(work / "pieces" / "part-00000.parquet") as out:
            pq.write_table(_in_process(len(pieces), parse_pieces, _PARSED), out)
    else:
        _tasks(spark, len(pieces)).mapInArrow(parse_pieces, from_arrow_schema(_PARSED)) \
            .write.parquet(str(work / "pieces"))
    fs, pieces_dir = storage.arrow(work / "pieces")
    counts = pq.read_table(pieces_dir, filesystem=fs, columns=[
        "table", "file", "piece", "rows", "rejected", "nonfinite", "digest"]).to_pylist()
    order = {key: i for i, key in enumerate(files)}
    counts.sort(key=lambda r: (order[r["table"]], r["file"], r["piece"]))
    return Parsed(work, tables, files, [
        Piece(r["table"], r["file"], r["piece"], r["rows"], r["rejected"],
              json.loads(r["nonfinite"]), r["digest"]) for r in counts])


def _parse_piece(table: TableDef, fmt: Format, f: InputFile, path: str, k: int,
                 piece: csv_split.Piece, store: Store | None
                 ) -> tuple[pa.Table, list[Rejected], str]:
    """A piece's typed rows, its rejected rows and the digest of what it read, in a task."""
    held = file_table(table)  # the columns in the file: not the partition columns
    bad: list[Rejected] = []
    if fmt.by_row_group:
        good, digest = parquet_rows(held, path, piece.start, store)
    else:
        data = remote.read_range(path, piece.start, piece.end, store)
        digest = hashlib.sha256(data).hexdigest()
        if fmt.name == "csv":
            good, bad = csv_flink.records(held, fmt, data, piece.first_line)
        elif fmt.name == "json":
            good, bad = json_lines.records(held, fmt, data, piece.first_line)
        elif fmt.name == "avro":
            good, bad = avro.records(held, data)
        else:
            good, bad = parse_records(table, f.names, data, piece.first_line, k == 0)
    return with_partition(table, good, f.partition), bad, digest


def write_rejected(parsed: Parsed, path: Place, more: Place | None = None) -> int:
    """rejected.csv (table, file, line, reason, the raw row), in arrival order, written
    atomically; returns its number of rows. The rejected rows' text is copied from the pieces
    that have some, a piece at a time; then the lines of ``more`` (a CSV file of these columns,
    removed: the rows a Python function failed on, udf/rejects.py)."""
    bad = [p for p in parsed.pieces if p.rejected]
    fs, pieces_dir = storage.arrow(parsed.dir / "pieces")
    pieces = ds.dataset(pieces_dir, filesystem=fs, format="parquet") if bad else None
    with storage.writing([path]) as (binary,), io.TextIOWrapper(
            binary, encoding="utf-8", newline="") as out:
        out.write(",".join(REJECTED_COLUMNS) + "\n")
        for p in bad:
            [text] = pieces.to_table(columns=["bad"], filter=(pc.field("table") == p.table) & (
                pc.field("file") == p.file) & (pc.field("piece") == p.piece)).column(0).to_pylist()
            out.write(text)
        extra = 0
        if more is not None:
            with more.open(encoding="utf-8", newline="") as lines:
                next(lines)  # its header
                for line in lines:
                    out.write(line)
                    extra += 1
            more.unlink()
    return sum(p.rejected for p in bad) + extra


def stage(spark: SparkSession | None, parsed: Parsed, key: str, out_dir: Path,
          rows_per_batch: int, first_rownum: int = 0, first_part: int = 0,
          file_batches: bool = False, end_markers: int = 0) -> list[Path]:
    """Write table ``key``'s parsed rows as micro-batch files of ``rows_per_batch`` rows,
    numbered from ``first_rownum`` (files from ``first_part``); returns the files in order.
    ``file_batches``: each input file starts a micro-batch (a scheduled run's landed files are
    read one after the other, the watermark moving between them), else they run on.
    ``end_markers``: the last file also announces the end of input to that many buckets
    (plan.END_FIRST). ``spark`` None: the tasks run in this process (``_in_process``)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    pieces = [p for p in parsed.pieces if p.table == key and p.rows]
    if not pieces:
        return []
    # Per piece: its first arrival number, its first row's place in its run of rows (its file,
    # or all files) and that run's first part.
    starts, at, run_start, parts = {}, first_rownum, first_rownum, 0
    for i, p in enumerate(pieces):
        if file_batches and i and p.file != pieces[i - 1].file:
            parts += math.ceil((at - run_start) / rows_per_batch)
            run_start = at
        starts[(p.file, p.piece)] = (at, at - run_start, parts)
        at += p.rows
    parts += math.ceil((at - run_start) / rows_per_batch)
    # Per part: the slices (piece, first row, end row) it takes, in arrival order.
    slices: list[list[tuple[int, int, int]]] = [[] for _ in range(parts)]
    for i, p in enumerate(pieces):
        first, place, part = starts[(p.file, p.piece)]
        for k in range(part + place // rows_per_batch,
                       part + (place + p.rows - 1) // rows_per_batch + 1):
            lo = (k - part) * rows_per_batch - place
            slices[k].append((i, max(lo, 0), min(lo + rows_per_batch, p.rows)))
    schema = pa.schema([*physical_schema(parsed.tables[key]), pa.field(ROWNUM, pa.int64())])
    piece_rows = [parsed.rows_file(key, p.file, p.piece) for p in pieces]
    tmp = out_dir.parent / f".{out_dir.name}.staging"
    storage.rmtree(tmp)
    where = tmp.absolute()

    def write_parts(batches):
        for batch in batches:
            for k in batch.column(0).to_pylist():
                tables = []
                if end_markers and k == parts - 1:  # first, as in arrival-number order
                    tables.append(_markers(schema, END_FIRST - np.arange(end_markers)[::-1]))
                for i, lo, hi in slices[k]:
                    rows = _read_rows(piece_rows[i])
                    if rows.num_rows != pieces[i].rows:  # not the attempt that was counted
                        raise RuntimeError(f"{piece_rows[i]}: {rows.num_rows} rows, counted "
                                           f"{pieces[i].rows}")
                    rows = rows.slice(lo, hi - lo)
                    first = starts[(pieces[i].file, pieces[i].piece)][0] + lo
                    tables.append(pa.table([*rows.columns, pa.array(
                        np.arange(first, first + rows.num_rows))], schema=schema))
                _write_part(where / f"{k}.parquet", pa.concat_tables(tables))
                yield pa.RecordBatch.from_pylist([{"part": k}], _WRITTEN)

    # One task per part: no shuffle, and the rows never enter a JVM (pyarrow writes them).
    written = (_in_process(parts, write_parts, _WRITTEN).num_rows if spark is None else
               _tasks(spark, parts).mapInArrow(write_parts, from_arrow_schema(_WRITTEN)).count())
    if written != parts:
        raise RuntimeError(f"staging {key}: {written} of {parts} parts written")
    files = []
    for k in range(parts):
        files.append(out_dir / f"part-{first_part + k:06d}.parquet")
        storage.replace(tmp / f"{k}.parquet", files[-1])
    storage.rmtree(tmp)
    return files


def stage_constant(out_dir: Path) -> list[Path]:
    """The one row of a SELECT without FROM (catalog.ONE_ROW): no column, arrival number 0."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "part-000000.parquet"
    with storage.open_output(path) as out:
        pq.write_table(pa.table({ROWNUM: pa.array([0], pa.int64())}), out)
    return [path]


def write_eof(table: TableDef, out_dir: Path) -> Path:
    """The end-of-input marker: one row, every column NULL, ``tw__rownum = -1``. It carries no
    data value: the stream planner gives it an event time past every valid one."""
    return _write_markers(table, out_dir / EOF_FILE, np.array([-1]))


def event_time_bound(part: Path, time_col: str, which: str) -> int | None:
    """The earliest or latest event time (epoch ms) in a staged part, None if it has none: from
    the Parquet statistics of its row groups (ingest.stage writes microseconds), no row read."""
    with storage.open_input(part) as fh:
        meta = pq.ParquetFile(fh).metadata
    index = meta.schema.to_arrow_schema().get_field_index(time_col)
    stats = [meta.row_group(g).column(index).statistics for g in range(meta.num_row_groups)]
    if any(s is None or (not s.has_min_max and s.null_count != meta.row_group(g).num_rows)
           for g, s in enumerate(stats)):
        raise RuntimeError(f"{part}: no statistics for {time_col}")  # a bug (ingest.stage)
    values = [(s.min_raw if which == "min" else s.max_raw) // 1000 for s in stats
              if s.has_min_max]
    return (min if which == "min" else max)(values) if values else None


def write_sweep(table: TableDef, path: Path, buckets: int) -> Path:
    """A state sweep (plan.SWEEP_FIRST): a row for each of ``buckets`` buckets, every column
    NULL."""
    return _write_markers(table, path, SWEEP_FIRST - np.arange(buckets))


def _write_markers(table: TableDef, path: Place, rownums: np.ndarray) -> Place:
    """A staged file of marker rows."""
    with storage.open_output(path) as out:
        pq.write_table(_markers(pa.schema([*physical_schema(table),
                                           pa.field(ROWNUM, pa.int64())]), rownums), out)
    return path


def _markers(schema: pa.Schema, rownums: np.ndarray, fixed: dict | None = None) -> pa.Table:
    """Marker rows: every column NULL, ``tw__rownum`` as given, ``fixed`` columns' values."""
    rows = {f.name: pa.nulls(len(rownums), f.type) for f in schema}
    rows[ROWNUM] = pa.array(rownums, pa.int64())
    for name, value in (fixed or {}).items():
        rows[name] = pa.array(np.full(len(rownums), value), schema.field(name).type)
    return pa.Table.from_pydict(rows, schema=schema)


def _tasks(spark: SparkSession, n: int):
    """A DataFrame of the numbers 0..n-1 spread over up to 4 tasks per core: the work items a
    function looks up by number (the driver ships their descriptions, never data)."""
    return spark.range(0, n, 1, max(1, min(n, 4 * spark.sparkContext.defaultParallelism)))


def _in_process(n: int, tasks, schema: pa.Schema) -> pa.Table:
    """What ``_tasks(spark, n).mapInArrow(tasks, schema)`` computes, computed by this process:
    the same functions over the same work items, the same files written, and no Spark job
    (the tests' runs of a case's few rows, tests/planlevel.py)."""
    return pa.Table.from_batches(list(tasks(iter([pa.record_batch(
        [pa.array(range(n), pa.int64())], names=["id"])]))), schema)


def _rows_file(work: Place, table: str, file: int, piece: int) -> Place:
    return work / "rows" / f"{table}-{file}-{piece}.arrow"


def _write_rows(place: Place, rows: pa.Table) -> None:
    """Write a piece's rows where the task runs, atomically (a task run again rewrites them)."""
    fs, where = storage.arrow(place)
    fs.create_dir(where.rsplit("/", 1)[0], recursive=True)
    tmp = f"{where}.{uuid.uuid4().hex}.tmp"  # two attempts of a task may run at once
    with fs.open_output_stream(tmp) as out, pa.ipc.new_stream(out, rows.schema) as writer:
        writer.write_table(rows)
    storage.move(fs, tmp, where)


def _write_part(place: Place, rows: pa.Table) -> None:
    """A staged part, as Spark reads it (timestamps as microseconds, TIMESTAMP_MICROS), in row
    groups of about _GROUP_BYTES: a reader holds a row group's columns at once."""
    fs, where = storage.arrow(place)
    fs.create_dir(where.rsplit("/", 1)[0], recursive=True)
    per_row = max(1, rows.nbytes // max(1, rows.num_rows))
    tmp = f"{where}.{uuid.uuid4().hex}.tmp"  # as _write_rows
    pq.write_table(rows, tmp, filesystem=fs, row_group_size=max(1024, _GROUP_BYTES // per_row))
    storage.move(fs, tmp, where)


def _read_rows(place: Place) -> pa.Table:
    fs, where = storage.arrow(place)
    with fs.open_input_stream(where) as f:
        return pa.ipc.open_stream(f).read_all()
