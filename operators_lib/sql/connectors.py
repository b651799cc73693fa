"""A table's ``WITH (...)`` clause: Flink's connector options and the binding they make.

``'connector' = 'filesystem'`` with ``'path'`` (a file or a directory: every file under it
that is not hidden, as Flink's file source reads it) and ``'format'`` = ``csv`` | ``json`` |
``parquet`` | ``avro`` binds a table to its input, and an ``INSERT INTO`` target to the files
the result is written to (``sink_binding``; io/sink_files.py). A relative ``path`` is from the
folder of the SQL file that declares the table (Flink's is its working directory, which a
scheduled run does not have). ``blackhole`` and ``print`` are sinks whose rows twinflow
writes only to its own outputs, as for a target without a WITH clause.

Every option is checked by name where the table is read (``binding``): one twinflow does not
implement is refused with its table and line, never ignored -- but those listed in
``IGNORED``, which change nothing about the result (each with why, shown as a note). So are
other connectors and Flink's legacy ``connector.type`` keys. A table that ``--data`` or a
query config's ``inputs`` binds does not use its WITH clause (io/sources.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from operators_lib.catalog import TableDef
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
    "avro": (),
}
# A format's options that only a sink has.
SINK_FORMAT_OPTIONS = {"avro": ("avro.codec",)}
# Avro's codecs, as Flink's 'avro.codec' names them (at their default levels).
AVRO_CODECS = ("null", "deflate", "snappy", "bzip2", "xz", "zstandard")
# Options that change nothing about the result: accepted, with a note saying why.
IGNORED = {
    "source.monitor-interval": "twinflow's scheduled runs read the files that are new when "
                               "they run (the DAG's schedule is the monitor interval)",
}
# A filesystem sink's options that change which files hold the rows, or when they appear in
# a stream that never ends, not the rows: twinflow writes a run's rows in one file per
# partition and task, committed when the run publishes.
_FILES = ("twinflow writes each run's rows in files of its own sizing (one per partition and "
          "task), committed together when the run publishes")
SINK_IGNORED = {
    **dict.fromkeys(("sink.rolling-policy.file-size", "sink.rolling-policy.rollover-interval",
                     "sink.rolling-policy.check-interval",
                     "sink.rolling-policy.inactivity-interval", "auto-compaction",
                     "compaction.file-size", "sink.parallelism", "sink.partition-commit.trigger",
                     "sink.partition-commit.delay",
                     "sink.partition-commit.watermark-time-zone",
                     "partition.time-extractor.kind",
                     "partition.time-extractor.timestamp-pattern",
                     "partition.time-extractor.timestamp-formatter"), _FILES),
}
SINK_OPTIONS = ("sink.partition-commit.policy.kind", "sink.partition-commit.success-file.name")
# The column types each sink format is written with (as checked with Flink's readers).
SINK_TYPES = ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL", "BOOLEAN",
              "STRING", "DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ")
# What a sink's partition column may be: its value is the folder's name as Flink writes it.
PARTITION_TYPES = ("STRING", "TINYINT", "SMALLINT", "INT", "BIGINT", "BOOLEAN", "DATE")
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
    partitioned_by: tuple[str, ...] = ()  # a sink's partition columns
    success_file: str | None = None  # a sink's marker in each partition it commits


def binding(table_name: str, options: tuple[tuple[str, str], ...], line: int | None,
            source: str | None, sink: bool = False) -> FileBinding:
    """The input binding of a table read by the query (``sink``: of the INSERT INTO target)
    from its WITH options; SqlError (its name and line) for a table without one, and for any
    connector, format or option twinflow does not implement."""

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
    if connector in SINKS and not sink:
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
    ignored = {**IGNORED, **SINK_IGNORED} if sink else IGNORED
    own = (*FORMAT_OPTIONS[fmt], *(SINK_FORMAT_OPTIONS.get(fmt, ()) if sink else ()))
    known = {"connector", "path", "format", "partition.default-name", *own, *ignored,
             *(SINK_OPTIONS if sink else ())}
    unknown = [k for k, _ in options if k not in known]
    if unknown:
        supported = ", ".join(map(repr, own)) or "none"
        raise refuse(f"WITH option {unknown[0]!r} is not supported by twinflow (the "
                     f"'{fmt}' format's options it implements: {supported})")
    for key in _BOOLEAN:
        if key in given and given[key].lower() not in ("true", "false"):
            raise refuse(f"{key!r} must be 'true' or 'false', got {given[key]!r}")
    _check_format(fmt, given, refuse)
    success = None
    if sink:
        policies = [p.strip() for p in given.get("sink.partition-commit.policy.kind", "").split(",")
                    if p.strip()]
        for policy in policies:
            if policy != "success-file":
                raise refuse(f"'sink.partition-commit.policy.kind' = '{policy}' is not "
                             "supported (twinflow commits partitions with 'success-file' only)")
        if policies:
            success = given.get("sink.partition-commit.success-file.name", "_SUCCESS")
    return FileBinding(given["path"], fmt,
                       tuple((k, v) for k, v in options
                             if k in own or k == "partition.default-name"),
                       tuple(f"{k} is ignored: {ignored[k]}" for k in given if k in ignored),
                       success_file=success)


def sink_binding(table: TableDef) -> FileBinding | None:
    """Where and how an INSERT INTO writes into ``table``: its files per its WITH clause
    (``binding``, PARTITIONED BY its partition columns), or None for a ``blackhole`` or
    ``print`` table and one without a WITH clause (the result is twinflow's outputs only).
    SqlError for what twinflow does not write: a format, an option, a column type."""
    if not table.options or dict(table.options).get("connector") in SINKS:
        return None
    bound = binding(table.name, table.options, table.line, table.source, sink=True)
    for column in table.physical:
        t = column.type
        if t.name not in SINK_TYPES or (t.name == "TIME" and t.precision):
            raise SqlError(f"table {table.name}: column {column.name} is {t.sql()}, which "
                           f"twinflow does not write to a '{bound.format}' file yet",
                           table.line, table.source)
        if bound.format == "avro" and (t.name == "TIMESTAMP_LTZ" or
                                       t.name == "TIMESTAMP" and t.precision > 3):
            # (Flink's avro format fails the job on such a column, saying so)
            raise SqlError(f"table {table.name}: column {column.name} is {t.sql()}, which "
                           "Flink's 'avro' format does not write (Flink: "
                           f"{_AVRO_REFUSES[t.name].format(p=t.precision, t=t.sql())})",
                           table.line, table.source)
    types = {c.name.lower(): c.type for c in table.physical}
    for key in table.partitioned_by:
        t = types.get(key.lower())
        if t is None:
            raise SqlError(f"table {table.name}: PARTITIONED BY {key}, which is none of its "
                           "columns", table.line, table.source)
        if t.name not in PARTITION_TYPES:
            raise SqlError(f"table {table.name}: partition column {key} is {t.sql()}; twinflow "
                           f"writes partitions of {', '.join(PARTITION_TYPES)} columns",
                           table.line, table.source)
    return replace(bound, partitioned_by=table.partitioned_by)


# Flink's messages for the column types its avro format cannot write (probed: Flink 2.3).
_AVRO_REFUSES = {
    "TIMESTAMP_LTZ": "\"Unsupported to derive Schema for type: {t}\"",
    "TIMESTAMP": "\"Avro does not support TIMESTAMP type with precision: {p}, it only supports "
                 "precision less than 3.\"",
}


def _check_format(fmt: str, given: dict[str, str], refuse) -> None:
    if fmt == "avro" and given.get("avro.codec", "snappy") not in AVRO_CODECS:
        raise refuse(f"'avro.codec' = {given['avro.codec']!r} is not supported (twinflow "
                     f"writes {', '.join(map(repr, AVRO_CODECS))}, each at its default level)")
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
