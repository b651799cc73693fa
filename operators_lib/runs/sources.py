"""Where each table the query reads takes its input from, and in which format.

One precedence: ``--data TABLE=PATH`` (``twinflow run``) or a query config's ``inputs`` bind
the table, whole; otherwise its ``WITH`` clause does (sql/connectors.py); a table with neither
is exit 2 naming it. A ``--data``/``inputs`` path keeps today's meaning: a ``.csv`` file (or
a directory of them) with a header row whose names match the table's columns; a directory of
``.json``, ``.parquet`` or ``.avro`` files, or such a file, is read in that format with its
defaults. A WITH binding reads its ``path`` as Flink does: a file, or every file under a
directory (recursively) whose name does not start with ``.`` or ``_``; an ``s3a://`` or
``s3://`` path is read from the object store (io/remote.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from operators_lib.catalog import TableDef
from operators_lib.engine.locations import local_path
from operators_lib.errors import InputError
from operators_lib.io import remote
from operators_lib.io.formats import HEADER_CSV, Format
from operators_lib.io.remote import Store
from operators_lib.sql.connectors import binding

_EXTENSIONS = {".csv": HEADER_CSV, ".json": "json", ".jsonl": "json", ".ndjson": "json",
               ".parquet": "parquet", ".avro": "avro"}


@dataclass(frozen=True)
class Source:
    """A table's input: a file or a directory, its format, and how it was bound."""

    table: TableDef
    root: Path | str  # a local path, or an object store's URI (io/remote.py)
    format: Format
    given: bool  # by --data / inputs (else by the WITH clause)
    notes: tuple[str, ...] = ()

    def files(self, required: bool, store: Store | None = None) -> list[Path] | list[str]:
        """The input files in arrival order (their paths' order); ``required``: none is an
        InputError (a bounded run's), else an empty list (a landing directory)."""
        root = self.root
        if isinstance(root, str):  # an object store's prefix (a WITH 'path')
            return self._remote_files(root, required, store)
        if root.is_file():
            return [root]
        if not root.is_dir():
            if required or not self.given:
                raise InputError(f"input not found: {root} (table {self.table.name})")
            return []
        if self.given:
            files = sorted(p for p in root.iterdir() if p.is_file()
                           and _EXTENSIONS.get(p.suffix.lower()) == self.format.name)
        else:
            files = sorted(p for p in root.rglob("*") if p.is_file() and not any(
                part.startswith((".", "_")) for part in p.relative_to(root).parts))
        if not files and required:
            kind = (f"{self.format.name} files" if self.format.name != HEADER_CSV
                    else ".csv files")
            raise InputError(f"input directory {root} of table {self.table.name} has no {kind}")
        return files

    def _remote_files(self, root: str, required: bool, store: Store | None) -> list[str]:
        base = root.rstrip("/") + "/"
        files = [uri for uri, _, _ in remote.list_files(root, store, recursive=True)
                 if uri == root or not any(part.startswith((".", "_"))
                                           for part in uri[len(base):].split("/"))]
        if not files and required:
            raise InputError(f"input not found: no file under {root} (table "
                             f"{self.table.name})")
        return files


def source_of(table: TableDef, given: Path | None) -> Source:
    """Table ``table``'s input (module docstring); ``given``: its --data / inputs path."""
    if given is not None:
        if table.partitioned_by:
            raise InputError(f"table {table.name} is PARTITIONED BY "
                             f"{', '.join(table.partitioned_by)}: its partition values come "
                             "from the key=value folders under its WITH clause's 'path', which "
                             "--data or a config's inputs cannot bind")
        path = local_path(given, f"input of {table.name}")
        return Source(table, path, Format(_format_of(path)), True)
    bound = binding(table.name, table.options, table.line, table.source)
    fmt = Format(bound.format, bound.options)
    if remote.S3.match(bound.path):  # s3:// is read as s3a:// (Hadoop's connector)
        return Source(table, remote.S3.sub("s3a://", bound.path), fmt, False, bound.notes)
    path = re.sub(r"^file:(//)?", "", bound.path)  # a file: URI is a local path
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", path):
        raise InputError(f"table {table.name}: 'path' {bound.path!r} is a URI twinflow does "
                         "not read yet: a table's files may be on a local path or on S3 "
                         "(s3a://, s3://); HDFS, GCS and ABFS are being built")
    location = Path(path)
    if not location.is_absolute() and table.base is not None:
        location = table.base / location
    return Source(table, location, fmt, False, bound.notes)


def sources(tables: Mapping[str, TableDef], given: Mapping[str, Path]) -> dict[str, Source]:
    """Every table's input (``tables`` by lower-case name; ``given`` by name as written)."""
    lowered = {k.lower(): v for k, v in given.items()}
    return {key: source_of(table, lowered.get(key)) for key, table in tables.items()}


def _format_of(path: Path) -> str:
    """The format of a --data / inputs path: its extension's, a directory's files' (one
    format), header CSV if none tells."""
    if not path.is_dir():
        return _EXTENSIONS.get(path.suffix.lower(), HEADER_CSV)
    found = {_EXTENSIONS[p.suffix.lower()] for p in path.iterdir()
             if p.is_file() and p.suffix.lower() in _EXTENSIONS}
    if len(found) > 1:
        raise InputError(f"input directory {path} holds files of several formats "
                         f"({', '.join(sorted(found))}): one format per table")
    return found.pop() if found else HEADER_CSV
