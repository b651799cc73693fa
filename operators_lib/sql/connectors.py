"""A table's ``WITH (...)`` clause: Flink's connector options and the input binding they make.

``'connector' = 'filesystem'`` with ``'path'`` (a file or a directory: every file under it
that is not hidden, as Flink's file source reads it) and ``'format'`` = ``csv`` | ``json`` |
``parquet`` | ``avro`` binds a table to its input. A relative ``path`` is read from the folder
of the SQL file that declares the table (Flink reads it from its working directory, which a
scheduled run does not have). ``blackhole`` and ``print`` are sinks (an ``INSERT INTO``
target): twinflow writes the result to its outputs as for any target.

Every option is checked by name where the table is read (``binding``): one twinflow does not
implement is refused with its table and line, never ignored -- but those listed in
``IGNORED``, which change nothing about the result (each with why, shown as a note). So are
other connectors and Flink's legacy ``connector.type`` keys. A table that ``--data`` or a
query config's ``inputs`` binds does not use its WITH clause (io/sources.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from operators_lib.errors import SqlError

FORMATS = ("csv", "json", "parquet", "avro")
SINKS = ("blackhole", "print")

# The options of each format that twinflow implements, as Flink names them.
FORMAT_OPTIONS = {
    "csv": ("csv.field-delimiter", "csv.quote-character", "csv.disable-quote-character",
            "csv.allow-comments", "csv.ignore-parse-errors", "csv.null-literal"),
    "json": ("json.ignore-parse-errors", "json.timestamp-format.standard",
             "json.fail-on-missing-field"),
    "parquet": (),
    "avro": (),  # (avro.codec is a sink's)
}
# Options that change nothing about the result: accepted, with a note saying why.
IGNORED = {
    "source.monitor-interval": "twinflow's scheduled runs read the files that are new when "
                               "they run (the DAG's schedule is the monitor interval)",
}
_BOOLEAN = ("csv.disable-quote-character", "csv.allow-comments", "csv.ignore-parse-errors",
            "json.ignore-parse-errors", "json.fail-on-missing-field")
_OPTION = re.compile(r"\s*'((?:[^']|'')*)'\s*=\s*'((?:[^']|'')*)'\s*(,|$)", re.DOTALL)


def parse_options(text: str) -> tuple[tuple[str, str], ...] | None:
    """The ``'key' = 'value'`` pairs of a WITH clause's body, in order ('' is a quote); None
    if it is not a list of such pairs."""
    pairs, at = [], 0
    while at < len(text):
        m = _OPTION.match(text, at)
        if not m:
            return None if text[at:].strip() else tuple(pairs)
        pairs.append((m.group(1).replace("''", "'"), m.group(2).replace("''", "'")))
        at = m.end()
        if not m.group(3):
            break
    return tuple(pairs)


@dataclass(frozen=True)
class FileBinding:
    """A table bound to files by its WITH clause."""

    path: str     # as written (io/sources.py resolves it)
    format: str   # one of FORMATS
    options: tuple[tuple[str, str], ...]  # the format's options, as written
    notes: tuple[str, ...]  # options accepted but not used, and why


def binding(table_name: str, options: tuple[tuple[str, str], ...], line: int | None,
            source: str | None) -> FileBinding:
    """The input binding of a table read by the query, from its WITH options; SqlError (its
    name and line) for a table without one, and for any connector, format or option twinflow
    does not implement."""

    def refuse(message: str) -> SqlError:
        return SqlError(f"table {table_name}: {message}", line, source)

    given = dict(options)
    if not options:
        raise refuse("no input: bind it with WITH ('connector' = 'filesystem', 'path' = ..., "
                     "'format' = ...) or give its files with --data (a query config: inputs)")
    legacy = sorted(k for k in given if k.startswith(("connector.", "format.")))
    if legacy and "connector" not in given:
        raise refuse(f"Flink's legacy connector options ({', '.join(map(repr, legacy))}) are "
                     "not supported: write 'connector' = 'filesystem', 'path', 'format'")
    connector = given.get("connector")
    if connector is None:
        raise refuse("its WITH clause has no 'connector'")
    if connector in SINKS:
        raise refuse(f"'connector' = '{connector}' is a sink: the table cannot be read")
    if connector != "filesystem":
        raise refuse(f"'connector' = '{connector}' is not supported (supported: 'filesystem'; "
                     f"as an INSERT INTO target also {', '.join(map(repr, SINKS))})")
    fmt = given.get("format")
    if fmt is None or "path" not in given:
        raise refuse("a filesystem table needs 'path' and 'format'")
    if fmt not in FORMATS:
        raise refuse(f"'format' = '{fmt}' is not supported (supported: "
                     f"{', '.join(map(repr, FORMATS))})")
    known = {"connector", "path", "format", "partition.default-name", *FORMAT_OPTIONS[fmt],
             *IGNORED}
    unknown = [k for k, _ in options if k not in known]
    if unknown:
        supported = ", ".join(map(repr, FORMAT_OPTIONS[fmt])) or "none"
        raise refuse(f"WITH option {unknown[0]!r} is not supported by twinflow (the "
                     f"'{fmt}' format's options it implements: {supported})")
    for key in _BOOLEAN:
        if key in given and given[key].lower() not in ("true", "false"):
            raise refuse(f"{key!r} must be 'true' or 'false', got {given[key]!r}")
    _check_format(fmt, given, refuse)
    return FileBinding(given["path"], fmt,
                       tuple((k, v) for k, v in options
                             if k in FORMAT_OPTIONS[fmt] or k == "partition.default-name"),
                       tuple(f"{k} is ignored: {IGNORED[k]}" for k in given if k in IGNORED))


def _check_format(fmt: str, given: dict[str, str], refuse) -> None:
    if fmt == "csv":
        for key in ("csv.field-delimiter", "csv.quote-character"):
            if key in given and len(unescape(given[key])) != 1:
                raise refuse(f"{key!r} must be one character, got {given[key]!r}")
    if fmt == "json":
        standard = given.get("json.timestamp-format.standard", "SQL")
        if standard not in ("SQL", "ISO-8601"):
            raise refuse("'json.timestamp-format.standard' must be 'SQL' or 'ISO-8601', got "
                         f"{standard!r}")


def unescape(text: str) -> str:
    r"""A delimiter as Flink reads it (Java's escapes: ``'\t'`` is a tab)."""
    return text.encode("latin-1", "backslashreplace").decode("unicode_escape") \
        if "\\" in text else text
