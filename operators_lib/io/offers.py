"""What a table's stream source has been offered, in order: the offer log.

A table's micro-batch files are staged in one directory (``staged/<table>/part-NNNNNN.parquet``),
and that directory is the stream's source. Spark's file source admits the files it has not
seen yet oldest first, one per micro-batch. Where the directory holds Spark's file-sink
metadata log (``_spark_metadata/``), the source lists only the files that log names, with the
modification times the log records, instead of listing the directory. twinflow writes that log
itself: a staged file is offered when the log names it, and the time it records is its place
(part k: k + 1 ms; the end-of-input marker: ``EOF_TIME``; a state sweep, ``sweep_file``: the
time of the newest file offered before it, which the stream has read). So the order is exact by
construction, whatever the file system's clock, its timestamp resolution, or whether it can set
a file's time or link a file at all (an object store can do neither); the files are neither
copied nor linked. Files the log does not name (a failed run's unstaged parts) are invisible to
the stream.

The log's format is Spark's (``FileStreamSinkLog``, version 1: a line ``v1``, then one JSON
entry per file). Each offer writes the whole list as a compaction batch (``<id>.compact``, ids
9, 19, 29, ...: Spark derives the compaction interval from the two newest, so the reader needs
nothing else, whatever ``spark.sql.streaming.fileSink.log.compactInterval`` says) and removes
all but the two newest; a reader lists one file. Written atomically (temp file, rename).
"""

from __future__ import annotations

import json
from pathlib import Path

from operators_lib.io.output import write_text

LOG = "_spark_metadata"
EOF_FILE = "eof.parquet"  # ingest.write_eof
EOF_TIME = 1 << 40  # the end-of-input marker comes after every part
SWEEP_PREFIX = "sweep-"  # a state sweep's file (sweep_file)
_SPACING = 10


def _batches(source: Path) -> list[int]:
    log = source / LOG
    if not log.is_dir():
        return []
    return sorted(int(p.name.removesuffix(".compact")) for p in log.glob("*.compact"))


def offered(source: Path) -> list[Path]:
    """The files offered to the source so far, in the order it admits them."""
    ids = _batches(source)
    if not ids:
        return []
    lines = (source / LOG / f"{ids[-1]}.compact").read_text().splitlines()[1:]
    entries = sorted((json.loads(line) for line in lines), key=lambda e: e["modificationTime"])
    return [source / e["path"].rsplit("/", 1)[1] for e in entries]


def offer(source: Path, files: list[Path], eof: bool = False) -> None:
    """Offer ``files`` (staged parts in ``source``) and, with ``eof``, the end-of-input marker
    (``EOF_FILE`` in ``source``); what was offered before stays offered."""
    names = {f.name for f in offered(source)} | {f.name for f in files}
    if eof:
        names.add(EOF_FILE)
    entries = [{"path": (source / name).absolute().as_uri(),
                "size": (source / name).stat().st_size, "isDir": False,
                "modificationTime": _time(name), "blockReplication": 1,
                "blockSize": 32 << 20, "action": "add"} for name in sorted(names)]
    log = source / LOG
    log.mkdir(parents=True, exist_ok=True)
    ids = _batches(source)
    batch = (ids[-1] + _SPACING) if ids else _SPACING - 1
    write_text(log / f"{batch}.compact",
               "v1\n" + "\n".join(json.dumps(e, separators=(",", ":")) for e in entries))
    for old in ids[:-1]:
        (log / f"{old}.compact").unlink()


def sweep_file(source: Path, batch: int) -> Path:
    """Where a state sweep read in micro-batch ``batch`` is staged: after everything offered
    so far (its name holds its time)."""
    last = max((_time(f.name) for f in offered(source)), default=0)
    return source / f"{SWEEP_PREFIX}{last:013d}-{batch:08d}.parquet"


def ended(source: Path) -> bool:
    """Whether the end-of-input marker has been offered."""
    return any(f.name == EOF_FILE for f in offered(source))


def _time(name: str) -> int:
    if name == EOF_FILE:
        return EOF_TIME
    if name.startswith(SWEEP_PREFIX):
        return int(name.split("-")[1])
    if not name.startswith("part-"):
        raise ValueError(f"{name}: neither a staged part, a state sweep nor the end-of-input "
                         "marker")
    return int(name.removeprefix("part-").removesuffix(".parquet")) + 1
