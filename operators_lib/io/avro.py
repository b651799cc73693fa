"""Flink's ``avro`` format: a WITH-bound table read with fastavro, and the schema an
``INSERT INTO`` an avro table writes with (io/sink_files.py).

Flink reads an Avro file with a reader schema made from the table (each column a nullable
field of the same name) and resolves the file's schema against it by Avro's rules (checked
with the oracle: tests/cases/sources/avro_types): fields by name, a field of the file the
table lacks is ignored, a column the file lacks is NULL, and Avro's promotions (an ``int``
read as a BIGINT, FLOAT or DOUBLE, a ``long`` or ``float`` as a DOUBLE). The driver checks the
file's schema (its header) before any task runs: a column whose Avro type the table's cannot
take is exit 2 naming both; a DECIMAL must have the table's scale and no more digits
(Flink would read its unscaled bytes at the table's scale); TIMESTAMP_LTZ and TIME columns are
refused (not checked against Flink yet).

A record whose event time (WATERMARK column) is NULL is a rejected row (its place in the file
as its line), as for every format.

Written, a table's rows have the schema Flink's avro format makes from the table (probed on
Flink 2.3: tests/cases/sinks/avro_types): a nullable record ``record`` in the namespace
``org.apache.flink.avro.generated``, each column but the partition columns a nullable field
(default null): TINYINT, SMALLINT and INT as ``int``, a DECIMAL as ``bytes`` with its
precision and scale, DATE, TIME(0) and TIMESTAMP(p <= 3) as ``date``, ``time-millis`` and
``timestamp-millis``. (A column declared NOT NULL is a nullable field too; Flink's would be
the plain type: a reader resolves both alike.)
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import BinaryIO

import fastavro
import pyarrow as pa

from operators_lib.catalog import TableDef
from operators_lib.errors import InputError
from operators_lib.io.csv_parse import Rejected, physical_schema
from operators_lib.types import FlinkType

# The Avro types (or logical types) each column type takes.
_TAKES = {
    "BOOLEAN": {"boolean"}, "TINYINT": {"int"}, "SMALLINT": {"int"}, "INT": {"int"},
    "BIGINT": {"int", "long"}, "FLOAT": {"int", "long", "float"},
    "DOUBLE": {"int", "long", "float", "double"}, "STRING": {"string"}, "DATE": {"date"},
    "TIMESTAMP": {"timestamp-millis", "timestamp-micros", "local-timestamp-millis",
                  "local-timestamp-micros"},
}


def _avro_type(schema) -> tuple[str, dict | None]:
    """(the type or logical type name, the schema) of a field, a nullable union unwrapped;
    ("union", None) for any other union."""
    if isinstance(schema, list):
        rest = [t for t in schema if t != "null"]
        if len(rest) != 1:
            return "union", None
        schema = rest[0]
    if isinstance(schema, dict):
        return schema.get("logicalType") or schema["type"], schema
    return schema, None


def check(table: TableDef, path: Path | str, fh: BinaryIO) -> None:
    """InputError unless the file (``fh``, open) is Avro and each of its fields that the table
    declares has a type the column takes (module docstring)."""
    try:
        schema = fastavro.reader(fh).writer_schema
    except (ValueError, EOFError, OSError) as e:
        raise InputError(f"{path}: not an Avro file (table {table.name}, format 'avro': {e})"
                         ) from None
    fields = {f["name"]: f["type"] for f in schema.get("fields", [])}
    for c in table.physical:
        if c.name not in fields:
            continue
        name, detail = _avro_type(fields[c.name])
        t = c.type
        if t.name == "DECIMAL":
            fits = name == "decimal" and detail is not None and detail.get("scale", 0) == \
                t.scale and detail.get("precision", 0) <= t.precision
        else:
            fits = name in _TAKES.get(t.name, ())
        if not fits:
            raise InputError(f"{path}: field {c.name} is Avro {_shown(fields[c.name])}, "
                             f"which the table's {t.sql()} cannot take (table {table.name})")


_WRITTEN = {"BOOLEAN": "boolean", "TINYINT": "int", "SMALLINT": "int", "INT": "int",
            "BIGINT": "long", "FLOAT": "float", "DOUBLE": "double", "STRING": "string",
            "DATE": {"type": "int", "logicalType": "date"},
            "TIME": {"type": "int", "logicalType": "time-millis"},
            "TIMESTAMP": {"type": "long", "logicalType": "timestamp-millis"}}


def writer_schema(columns: list[tuple[str, FlinkType]]) -> list:
    """The Avro schema Flink writes rows of ``columns`` with (module docstring)."""
    def written(t: FlinkType):
        if t.name == "DECIMAL":
            return {"type": "bytes", "logicalType": "decimal", "precision": t.precision,
                    "scale": t.scale}
        return _WRITTEN[t.name]

    return ["null", {"type": "record", "name": "record",
                     "namespace": "org.apache.flink.avro.generated",
                     "fields": [{"name": n, "type": ["null", written(t)], "default": None}
                                for n, t in columns]}]


def _shown(schema) -> str:
    return json.dumps(schema, separators=(",", ":"))


def records(table: TableDef, data: bytes) -> tuple[pa.Table, list[Rejected]]:
    """A whole Avro file's typed rows and rejected rows."""
    columns: dict[str, list] = {c.name: [] for c in table.physical}
    rowtime = table.watermark.column if table.watermark else None
    rejected = []
    for at, record in enumerate(fastavro.reader(io.BytesIO(data)), start=1):
        if rowtime and record.get(rowtime) is None:
            rejected.append(Rejected(at, f"column {rowtime}: NULL in the event-time (WATERMARK) "
                                         "column", json.dumps(record, default=str)))
            continue
        for c in table.physical:
            columns[c.name].append(_value(record.get(c.name), c.type))
    schema = physical_schema(table)
    return pa.table({f.name: pa.array(columns[f.name], f.type) for f in schema},
                    schema=schema), rejected


def _value(v, t: FlinkType):
    if v is None:
        return None
    if t.is_floating:
        return float(v)
    return v
