"""A table's input format and what it means for reading: how the driver learns a file's
columns (a header row; a Parquet footer, whose column types must fit the table's), how a file
is cut into pieces (byte ranges at newlines, Parquet row groups), and how a task turns a piece
into typed rows and rejected rows (csv_parse.py, csv_flink.py, json_lines.py, avro.py; Parquet
here).

Formats: ``header-csv`` (twinflow's own CSV with a header row, for ``--data`` and
``inputs``) and Flink's ``csv``, ``json``, ``parquet`` and ``avro`` (a WITH clause, or
``--data`` of ``.json`` / ``.parquet`` / ``.avro`` files). An Avro file is one piece.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO
from urllib.parse import unquote

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from operators_lib.catalog import TableDef
from operators_lib.errors import InputError
from operators_lib.io import avro, remote
from operators_lib.io.csv_parse import arrow_type, convert_text, physical_schema, read_header
from operators_lib.io.remote import Store

HEADER_CSV = "header-csv"  # twinflow's own: a header row names the columns
DEFAULT_PARTITION = "__DEFAULT_PARTITION__"  # Flink's name of a NULL partition value


@dataclass(frozen=True)
class Format:
    """How a table's files are read: ``name`` (``header-csv`` or a Flink format) and the
    format's WITH options."""

    name: str = HEADER_CSV
    options: tuple[tuple[str, str], ...] = ()

    def option(self, key: str, default: str | None = None) -> str | None:
        return next((v for k, v in self.options if k == key), default)

    def flag(self, key: str) -> bool:
        return (self.option(key) or "false").lower() == "true"

    @property
    def by_row_group(self) -> bool:
        """A piece is a Parquet row group (not a byte range)."""
        return self.name == "parquet"

    @property
    def cut_at_newlines(self) -> bool:
        """A file may be cut at any newline (JSON lines hold none inside a value), not only
        where no quote is open (CSV); csv_split.py."""
        return self.name == "json"

    @property
    def cuttable(self) -> bool:
        """A file may be cut into byte ranges at all: CSV quoted by ``"`` (the one csv_split
        finds), JSON lines."""
        if self.name == "csv":
            return not self.flag("csv.disable-quote-character") and \
                self.option("csv.quote-character", '"') == '"'
        return self.name in (HEADER_CSV, "json")


def columns_of(table: TableDef, fmt: Format, path: Path | str, store: Store | None = None
               ) -> tuple[str, ...]:
    """The names a file's fields are matched by (lower case), read by the driver: a
    header-csv file's header, checked; a Parquet footer's columns, checked against the
    table's types; the table's own columns (but its partition columns) for the other
    formats."""
    if fmt.name in (HEADER_CSV, "parquet", "avro"):
        with remote.open_input(path, store) as fh:
            if fmt.name == HEADER_CSV:
                return read_header(table, path, fh)
            if fmt.name == "parquet":
                _check_parquet(file_table(table), path, fh)
            else:
                avro.check(file_table(table), path, fh)
    return tuple(c.name.lower() for c in file_table(table).physical)


def file_table(table: TableDef) -> TableDef:
    """The columns a file of ``table`` holds: all but its partition columns (PARTITIONED BY),
    whose values are its folders' names."""
    if not table.partitioned_by:
        return table
    keys = {k.lower() for k in table.partitioned_by}
    watermark = table.watermark if table.watermark and \
        table.watermark.column.lower() not in keys else None
    return replace(table, columns=tuple(c for c in table.columns if c.name.lower() not in keys),
                   watermark=watermark)


def partition_of(table: TableDef, fmt: Format, path: Path, name: str
                 ) -> tuple[tuple[str, str], ...]:
    """The partition values of the file at ``name`` under its table's folder, from its
    ``key=value`` folders (Flink's escapes undone); InputError if one is missing or not of
    its type, or is ``partition.default-name`` (``__DEFAULT_PARTITION__``): a NULL partition,
    which Flink 2.3 cannot read ("Path should not be null or empty"), so neither does
    twinflow."""
    if not table.partitioned_by:
        return ()
    default = fmt.option("partition.default-name", DEFAULT_PARTITION)
    found = {}
    for part in Path(name).parts[:-1]:
        key, sep, value = part.partition("=")
        if sep and value == default:
            raise InputError(f"{path}: a NULL partition ({part}), which Flink 2.3 cannot read "
                             "(TableException: Path should not be null or empty), nor twinflow: "
                             "move its files or give the partition a value")
        if sep:
            found[unquote(key)] = unquote(value)
    values = []
    for key in table.partitioned_by:
        if key not in found:
            raise InputError(f"{path}: not in a {key}=... folder under the table's 'path' "
                             f"(table {table.name} is PARTITIONED BY "
                             f"{', '.join(table.partitioned_by)})")
        column = table.column(key)
        value = found[key]
        if column.type.name != "STRING" and convert_text(pd.Series([value]), column.type)[1][0]:
            raise InputError(f"{path}: partition {key}={value!r} is not a valid "
                             f"{column.type.sql()} (table {table.name})")
        values.append((key, value))
    return tuple(values)


def with_partition(table: TableDef, rows: pa.Table, partition: tuple[tuple[str, str], ...]
                   ) -> pa.Table:
    """A file's rows (of ``file_table``) with its partition columns' values, in the table's
    column order."""
    if not partition:
        return rows
    values = dict(partition)
    schema = physical_schema(table)
    columns = []
    for field, c in zip(schema, table.physical):
        if c.name in values:
            typed = pa.array(convert_text(pd.Series([values[c.name]]), c.type)[0], field.type)
            columns.append(pa.repeat(typed[0], rows.num_rows))
        else:
            columns.append(rows.column(c.name))
    return pa.Table.from_arrays(columns, schema=schema)


def row_groups(path: Path | str, store: Store | None = None) -> list[int]:
    """The row counts of a Parquet file's row groups (from its footer)."""
    with remote.open_input(path, store) as fh:
        meta = pq.ParquetFile(fh).metadata
    return [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]


def _fits(want: pa.DataType, have: pa.DataType) -> bool:
    if pa.types.is_timestamp(want):
        return pa.types.is_timestamp(have) and (have.tz is None) == (want.tz is None)
    if pa.types.is_string(want):
        return pa.types.is_string(have) or pa.types.is_large_string(have)
    if pa.types.is_time(want):
        return pa.types.is_time(have)
    return want == have


def _check_parquet(table: TableDef, path: Path | str, fh: BinaryIO) -> None:
    """InputError unless every column of the file that the table declares has its type (a
    column the file lacks is NULL, as Flink reads it)."""
    try:
        schema = pq.read_schema(fh)
    except pa.ArrowInvalid as e:
        raise InputError(f"{path}: not a Parquet file (table {table.name}, format 'parquet': "
                         f"{e})") from None
    for c in table.physical:
        index = schema.get_field_index(c.name)
        if index < 0:
            continue
        want = arrow_type(c.type)
        if c.type.name == "TIMESTAMP":
            want = pa.timestamp("us")  # a TIMESTAMP has no time zone; a TIMESTAMP_LTZ has
        have = schema.field(index).type
        if not _fits(want, have):
            raise InputError(f"{path}: column {c.name} is {have} in the Parquet file, which "
                             f"does not fit the table's {c.type.sql()} (table {table.name})")


def parquet_rows(table: TableDef, path: str, group: int, store: Store | None = None
                 ) -> tuple[pa.Table, str]:
    """A Parquet row group's rows as the table's typed rows, and a digest of them; read
    where the task runs."""
    with remote.open_input(path, store) as fh:
        parquet = pq.ParquetFile(fh)
        names = set(parquet.schema_arrow.names)
        read = parquet.read_row_group(group, columns=[c.name for c in table.physical
                                                      if c.name in names])
    schema = physical_schema(table)
    columns = []
    for field in schema:
        if field.name not in names:
            columns.append(pa.nulls(read.num_rows, field.type))
            continue
        values = read.column(field.name)
        if pa.types.is_timestamp(field.type):  # to microseconds, a TIMESTAMP's as UTC
            values = values.cast(pa.timestamp("us", tz=values.type.tz), safe=False) \
                .cast(field.type)
        columns.append(values.cast(field.type))
    rows = pa.Table.from_arrays(columns, schema=schema)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, schema) as writer:
        writer.write_table(rows)
    return rows, hashlib.sha256(sink.getvalue()).hexdigest()
