"""Where each table the query reads takes its input from, and in which format.

One precedence: ``--data TABLE=PATH`` (``twinflow run``) or a query config's ``inputs`` bind
the table, whole; otherwise its ``WITH`` clause does (sql/connectors.py); a table with neither
is exit 2 naming it. A ``--data``/``inputs`` path keeps today's meaning: a ``.csv`` file (or
a directory of them) with a header row whose names match the table's columns; a directory of
``.json``, ``.parquet`` or ``.avro`` files, or such a file, is read in that format with its
defaults. A WITH binding reads its ``path`` as Flink does: a file, or every file under a
directory (recursively) whose name does not start with ``.`` or ``_``. Either may be a
local path, a ``file:``, ``s3a://``, ``s3://`` or ``hdfs://`` URI (io/remote.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from operators_lib.catalog import TableDef
from operators_lib.errors import InputError
from operators_lib.io import remote, uris
from operators_lib.io.formats import HEADER_CSV, Format
from operators_lib.io.remote import Store
from operators_lib.sql.connectors import binding

_EXTENSIONS = {".csv": HEADER_CSV, ".json": "json", ".jsonl": "json", ".ndjson": "json",
               ".parquet": "parquet", ".avro": "avro"}


@dataclass(frozen=True)
class Source:
    """A table's input: a file or a directory, its format, and how it was bound."""

    table: TableDef
    root: Path | str  # a local path, or an S3 or HDFS URI (io/remote.py)
    format: Format
    given: bool  # by --data / inputs (else by the WITH clause)
    notes: tuple[str, ...] = ()

    def files(self, required: bool, store: Store | None = None) -> list[Path] | list[str]:
        """The input files in arrival order (their paths' order); ``required``: none is an
        InputError (a bounded run's), else an empty list (a landing directory)."""
        return list(self.listing(required, store))

    def listing(self, required: bool, store: Store | None = None, after: str | None = None
                ) -> dict[Path, tuple[int, float]] | dict[str, tuple[int, float]]:
        """``files()`` with their sizes and modification times, as listed. ``after``: the
        newest consumed file's name under the root, whose folder and those before it are
        closed (remote.walk): not listed again."""
        root = self.root

        def skip(name: str, is_dir: bool) -> bool:
            if self.given:  # a landing directory's files of its format
                return not is_dir and _EXTENSIONS.get(
                    "." + name.rpartition(".")[2].lower()) != self.format.name
            return name.startswith((".", "_"))  # as Flink's filesystem source

        listed = remote.walk(root, store, not self.given, skip,
                             tuple(after.split("/")) if after else ())
        files = {location: (size, mtime) for location, size, mtime in listed}
        absent = isinstance(root, Path) and not root.exists()
        if files or not (required or (absent and not self.given)):
            return files
        if isinstance(root, str):
            raise InputError(f"input not found: no file under {root} (table "
                             f"{self.table.name})")
        if not root.is_dir():
            raise InputError(f"input not found: {root} (table {self.table.name})")
        kind = f"{self.format.name} files" if self.format.name != HEADER_CSV else ".csv files"
        raise InputError(f"input directory {root} of table {self.table.name} has no {kind}")


def source_of(table: TableDef, given: Path | str | None, store: Store | None = None
              ) -> Source:
    """Table ``table``'s input (module docstring); ``given``: its --data / inputs path or
    URI; ``store``: how to reach S3 and HDFS (a given URI's format may take a listing)."""
    if given is not None:
        if table.partitioned_by:
            raise InputError(f"table {table.name} is PARTITIONED BY "
                             f"{', '.join(table.partitioned_by)}: its partition values come "
                             "from the key=value folders under its WITH clause's 'path', which "
                             "--data or a config's inputs cannot bind")
        path = uris.location(given, f"input of {table.name}")
        return Source(table, path, Format(_format_of(path, store)), True)
    bound = binding(table.name, table.options, table.line, table.source)
    where = uris.table_path(bound.path, f"table {table.name}: 'path'", table.base)
    return Source(table, where, Format(bound.format, bound.options), False, bound.notes)


def sources(tables: Mapping[str, TableDef], given: Mapping[str, Path | str],
            store: Store | None = None) -> dict[str, Source]:
    """Every table's input (``tables`` by lower-case name; ``given`` by name as written)."""
    lowered = {k.lower(): v for k, v in given.items()}
    return {key: source_of(table, lowered.get(key), store) for key, table in tables.items()}


def _format_of(path: Path | str, store: Store | None) -> str:
    """The format of a --data / inputs path: its extension's, a directory's files' (one
    format), header CSV if none tells."""
    suffix = "." + str(path).rsplit("/", 1)[-1].rpartition(".")[2].lower()
    if isinstance(path, Path) and path.is_dir():
        names = [str(p) for p in path.iterdir() if p.is_file()]
    elif suffix in _EXTENSIONS or isinstance(path, Path):
        return _EXTENSIONS.get(suffix, HEADER_CSV)
    else:  # a URI: a prefix, unless a file of a known format
        names = [uri for uri, _, _ in remote.walk(path, store, recursive=False)]
    found = {_EXTENSIONS[s] for s in ("." + n.rpartition(".")[2].lower() for n in names)
             if s in _EXTENSIONS}
    if len(found) > 1:
        raise InputError(f"input directory {path} holds files of several formats "
                         f"({', '.join(sorted(found))}): one format per table")
    return found.pop() if found else HEADER_CSV
