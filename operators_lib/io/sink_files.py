"""``INSERT INTO t`` where ``t`` is a filesystem table: the result written where and how its
WITH clause says (sql/connectors.sink_binding), as Flink's filesystem sink writes it.

Layout, as Flink's: the files directly under ``'path'``, or under ``key=value/`` folders for
``PARTITIONED BY`` (the partition columns in the folder names only; a NULL or empty value is
``partition.default-name``, default ``__DEFAULT_PARTITION__``; names escaped as Flink and
Hive escape them: ``a/b`` is ``a%2Fb``); csv and json without a header, one row per line
(io/flink_text.py); parquet with the columns' types. Files are ``part-<tag>-<n>`` (Flink's:
``part-<uuid>-task-<i>-file-<n>``), written by the executors in the result's order.

Two steps, so that nothing is visible before the run is: ``stage`` writes the files into a
hidden folder under the path (``.twinflow-<tag>.inprogress/``: Flink's and Spark's readers,
and twinflow's, skip hidden files), with ``sink.json`` beside the run's outputs saying what to
commit; ``commit`` (the publish step) moves them into place and writes each partition's
success file (``'sink.partition-commit.policy.kind' = 'success-file'``). The files a commit
put in place are recorded in the query's state per tag (a scheduled run's interval, or the
one tag of a bounded run's ``--out``): committing a tag again first removes what it committed
before, so a retried or re-run interval replaces its own files and never writes its rows
twice, and a commit killed half-way is completed by the next. Readers may see a commit's
files appear one by one (as Flink's, which renames each file at a checkpoint).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, Observation
from pyspark.sql import functions as F

from operators_lib.catalog import TableDef
from operators_lib.errors import StateError
from operators_lib.io import storage, uris
from operators_lib.io.avro import writer_schema
from operators_lib.io.flink_text import csv_line, json_line
from operators_lib.io.output import write_json, write_text
from operators_lib.io.remote import Store
from operators_lib.io.storage import Place
from operators_lib.sql.connectors import FileBinding, sink_binding
from operators_lib.types import FlinkType

DEFAULT_PARTITION = "__DEFAULT_PARTITION__"
PLAN = "sink.json"  # beside a run's outputs: the staged files to commit


@dataclass(frozen=True)
class Sink:
    """An INSERT INTO target's files: its table's name, binding and folder."""

    table: str
    binding: FileBinding
    path: str  # the folder, a local path or a URI (relative ones from the SQL file's folder)

    def place(self, store: Store | None = None) -> Place:
        return storage.place(self.path, f"table {self.table}: 'path'", store)


def sink_of(table: TableDef | None) -> Sink | None:
    """The files an INSERT INTO ``table`` writes; None where it writes none (no WITH clause,
    ``blackhole``, ``print``). SqlError for what twinflow does not write."""
    bound = sink_binding(table) if table is not None else None
    if bound is None:
        return None
    return Sink(table.name, bound,
                str(uris.table_path(bound.path, f"table {table.name}: 'path'", table.base)))


def stage(rows: DataFrame, sink: Sink, store: Store, tag: str,
          columns: list[tuple[str, FlinkType]], order: list[str], plan_dir: Place,
          record: str | None = None) -> Place:
    """Write ``rows`` (``columns``; sorted by ``order``) into the hidden staging folder of
    ``tag`` under the sink's folder (reached through ``store``; returned), replacing one a
    failed attempt left, and
    ``plan_dir``/sink.json saying what ``commit`` moves into place. ``record``: whose files
    these replace when committed (default: the tag's)."""
    binding = sink.binding
    keys = [k.lower() for k in binding.partitioned_by]
    data = [(n, t) for n, t in columns if n.lower() not in keys]
    parts = [n for k in keys for n, _ in columns if n.lower() == k]  # PARTITIONED BY's order
    default = dict(binding.options).get("partition.default-name", DEFAULT_PARTITION)
    values = [_partition_value(F.col(f"`{n}`"), default) for n in parts]
    folder = sink.place(store)
    staged = _staged(folder, tag)
    storage.rmtree(staged)
    ordered = rows.orderBy(*order) if order else rows
    if parts:  # one file per partition and task, in the result's order within each
        ordered = ordered.sortWithinPartitions(*values, *order)
    folders = [v.alias(n) for v, n in zip(values, parts)]
    written = Observation()
    ordered = ordered.observe(written, F.count(F.lit(1)).alias("rows"))
    options = dict(binding.options)
    if binding.format == "parquet":
        out = ordered.select(*[F.col(f"`{n}`") for n, _ in data], *folders)
        out.write.partitionBy(*parts).parquet(str(staged))
    elif binding.format == "avro":
        out = ordered.select(*[_avro_value(F.col(f"`{n}`"), t).alias(n) for n, t in data],
                             *folders)
        codec = options.get("avro.codec", "snappy")
        out.write.partitionBy(*parts).format("avro") \
            .option("avroSchema", json.dumps(writer_schema(data))) \
            .option("compression", "uncompressed" if codec == "null" else codec) \
            .save(str(staged))
    else:
        line = csv_line(data, options) if binding.format == "csv" else json_line(data, options)
        ordered.select(line.alias("value"), *folders).write.partitionBy(*parts) \
            .text(str(staged))
    numbered: dict[str, int] = {}
    moves = []
    # Spark's files, in task order, and their final names; none for no rows (Spark would
    # leave one empty file, Flink writes none)
    for name in storage.files(staged) if written.get["rows"] else []:
        parent, _, base = name.rpartition("/")
        if base.startswith("part-"):
            n = numbered[parent] = numbered.get(parent, -1) + 1
            moves.append((name, f"{parent}/" * bool(parent) + f"part-{_safe(tag)}-{n}"))
    write_json(plan_dir / PLAN, {"folder": str(folder), "tag": tag, "files": moves,
                                 "record": record or tag, "success_file": binding.success_file})
    return folder


def commit(plan_dir: Place, record_dir: Place, store: Store | None = None) -> int | None:
    """Move the files ``stage`` staged (its plan in ``plan_dir``) into place, replacing those
    the same tag committed before (recorded in ``record_dir``); returns how many, None if
    nothing was staged. Run again after a kill, it completes the same moves."""
    if not (plan_dir / PLAN).exists():
        return None
    plan = json.loads((plan_dir / PLAN).read_text())
    folder = storage.place(plan["folder"], "a sink's 'path'", store)
    staged = _staged(folder, plan["tag"])
    placed = [str(folder / target) for _, target in plan["files"]]
    record = record_dir / f"{_safe(plan['record'])}.json"
    before = json.loads(record.read_text())["files"] if record.exists() else []
    # recorded first: a commit killed below is completed, or undone, by the next of the tag
    write_json(record, {"files": sorted(set(before) | set(placed))})
    for uri in sorted(set(before) - set(placed)):
        old = storage.place(uri, "a sink file", store)
        if old.exists():
            old.unlink()
    for source, target in plan["files"]:
        if (staged / source).exists():
            if storage.is_local(folder):
                (folder / target).parent.mkdir(parents=True, exist_ok=True)
            storage.replace(staged / source, folder / target)
        elif not (folder / target).exists():  # a bug: the plan names what was staged
            raise StateError(f"{staged / source}: staged for {folder / target} and gone")
    if plan["success_file"]:
        parents = {target.rpartition("/")[0] for _, target in plan["files"]}
        for parent in sorted(parents):
            write_text(folder / parent / plan["success_file"] if parent
                       else folder / plan["success_file"], "")
    write_json(record, {"files": placed})
    storage.rmtree(staged)
    (plan_dir / PLAN).unlink()
    return len(placed)


def _avro_value(c: Column, t: FlinkType) -> Column:
    """A column as Spark's Avro writer takes it for Flink's schema: a TIME(0) as its
    milliseconds of the day (``time-millis``; Spark writes no TIME)."""
    return (c.cast("bigint") * 1000).cast("int") if t.name == "TIME" else c


def _partition_value(c: Column, default: str) -> Column:
    """A partition column's folder value as Flink writes it: its text, or ``default`` for a
    NULL or an empty string."""
    text = c.cast("string")
    return F.when(text.isNull() | (text == ""), F.lit(default)).otherwise(text)


def _staged(folder: Place, tag: str) -> Place:
    return folder / f".twinflow-{_safe(tag)}.inprogress"


def _safe(tag: str) -> str:
    """A tag as part of a file name: letters, digits, '.', '_' and '-' only."""
    return re.sub(r"[^0-9A-Za-z._-]", "-", tag)


