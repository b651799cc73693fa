"""A query's state directory and the steps over it that every run takes: ``twinflow run``
(its ``--out DIR/_state``) and the scheduled runs of the DAGs
(``$TWINFLOW_HOME/state/<query>``), both through runs/lifecycle.py. One layout, one manifest::

    manifest.json    (manifest.py) what is staged: per table its input files (rows, rejected
                     rows, first row number), its rows, its micro-batch files and its latest
                     event time; the query the state runs (queries.py: its SQL, TopN split,
                     batch size, state layout); for scheduled runs the TopN split and state layout
                     (stream/layout.py) the state was built with and its generation
                     (runs/binding.bind_state); for a bounded run (twinflow run) its
                     fingerprint and how its stream ended (``run``)
    parsed/          the new input as the executors parsed it (ingest.py), until staged
    staged/<table>/  micro-batch files (part-NNNNNN.parquet), append-only; the stream's source:
                     its offer log (_spark_metadata/, io/offers.py) names the files offered
                     to the stream so far, in order (and, once a bounded input is all offered,
                     its end-of-input marker, eof.parquet)
    checkpoint/      Spark's checkpoint (offsets, commits, RocksDB state)
    changelog/       the changelog, a directory per micro-batch id (stream/runner.py)
    result/          an updating query's result as signed row counts (result_store.py)
    runs/<key>.json  what each run covered (``record_run``): the staged parts and rows per
                     table, its first and last micro-batch, the state generation, its report;
                     a scheduled run's key is its data interval, a ``twinflow run``'s the UTC
                     time it started (a stopped run resumed: one record per invocation)
    late/, retired/  what scheduled runs keep (runs/streaming.py, runs/binding.py)

Staging is one transaction: ``stage`` writes micro-batch files after those the manifest
records and saves the manifest last, which commits them. Files that a failed run left beyond
the manifest were never offered to the stream (it runs after the manifest is saved):
``discard_unstaged`` removes them, so the next run succeeds.
"""

from __future__ import annotations

import fcntl
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import ConfigDict
from pyspark.sql import SparkSession

from operators_lib.catalog import TableDef
from operators_lib.errors import InputError
from operators_lib.io import ingest, offers
from operators_lib.io.output import changelog_line
from operators_lib.io.records import Record
from operators_lib.io.storage import Place, is_local
from operators_lib.ops.reports import RecordedReport, StreamReport
from operators_lib.plan import LINE, Node
from operators_lib.state.lease import leased
from operators_lib.state.manifest import Manifest, StagedFile, StagedTable
from operators_lib.stream.planner import stream_dataframe
from operators_lib.stream.rows import BUCKETS
from operators_lib.stream.runner import SPARK, SparkRuntime, StreamRun

RUNS = "runs"
LOCK = ".lock"


@contextmanager
def locked(state: Place) -> Iterator[None]:
    """Hold the state for one run or state command; another at the same time fails (exit 2).
    An advisory lock on ``.lock``, released by the system if the process dies; on a store a
    lease (state/lease.py), which lapses a minute after a killed holder's last renewal."""
    if not is_local(state):
        with leased(state):
            yield
        return
    state.mkdir(parents=True, exist_ok=True)
    with open(state / LOCK, "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError(f"{state} is in use by another run or `twinflow state` "
                             "command; try again when it has ended") from None
        yield


def staged_files(state: Path, table: str) -> list[Path]:
    """A table's staged micro-batch files, oldest first."""
    return sorted((state / "staged" / table).glob("part-*.parquet"))


def staged_as_of(state: Path, record: RunRecord, tables) -> dict[str, list[Path]]:
    """Each table's staged files as of the run of ``record`` (a later run may have staged
    more)."""
    return {t: staged_files(state, t)[:record.parts.get(t, 0)] for t in tables}


def discard_unstaged(state: Path) -> None:
    """Remove micro-batch files that a failed run wrote beyond what the manifest records
    (module docstring)."""
    staged = Manifest.load(state)
    for d in (state / "staged").glob("*"):
        parts = staged.table(d.name).parts
        for f in d.glob("part-*.parquet"):
            if int(f.stem.removeprefix("part-")) >= parts:
                f.unlink()


def stage(spark: SparkSession | None, parsed: ingest.Parsed, state: Path, rows_per_batch: int,
          file_batches: bool, ends: bool = False) -> None:
    """Stage the parsed input after what the manifest records, as micro-batch files of
    ``rows_per_batch`` rows (``file_batches``: each input file starts one); the manifest, saved
    last, records them. ``ends``: this is the whole input, and its last part announces its end
    to every bucket (plan.ends_in_last_part); ``spark`` None: without Spark (ingest.stage)."""
    record = Manifest.load(state)
    added = {}
    for key in parsed.tables:
        if not parsed.files[key]:
            continue
        entry = record.tables.setdefault(key, StagedTable(files={}, rows=0, parts=0))
        added[key] = ingest.stage(spark, parsed, key, state / "staged" / key, rows_per_batch,
                                  first_rownum=entry.rows, first_part=entry.parts,
                                  file_batches=file_batches,
                                  end_markers=BUCKETS if ends else 0)
        wm = parsed.tables[key].watermark
        if wm is not None and added[key]:  # the table's latest event time, from the footers
            latest = [t for p in added[key]
                      if (t := ingest.event_time_bound(p, wm.column, "max")) is not None]
            known = [entry.max_event_ms] if entry.max_event_ms is not None else []
            entry.max_event_ms = max([*latest, *known], default=None)
        for f, rows, rejected in parsed.per_file(key):
            entry.files[f.key] = StagedFile(rows=rows, rejected=rejected, first_row=entry.rows)
            entry.rows += rows
        entry.parts += len(added[key])
    record.save(state)


def table_watermarks(state: Path, tables: dict[str, TableDef]) -> dict[str, int | None]:
    """Each table's own watermark (epoch ms; None: none yet, or no WATERMARK): its latest
    staged event time less its delay, as a Flink source's. (Spark's is the least of them.)"""
    staged = Manifest.load(state)
    out = {}
    for key, table in tables.items():
        latest = staged.table(key).max_event_ms
        out[key] = None if latest is None or table.watermark is None else (
            latest - table.watermark.delay_ms)
    return out


class RunRecord(Record):
    """What one run covered (``runs/<key>.json``, module docstring): each table's staged parts
    and rows, its micro-batches, whether the state was replayed in it, the state generation and
    TopN split it ran with (a record of a twinflow that did not write these three: their
    defaults), and its report (a scheduled run's stream_report.json; a bounded run's stream
    section)."""

    model_config = ConfigDict(frozen=True)

    parts: dict[str, int]
    rows: dict[str, int]
    first_batch: int
    last_batch: int
    replayed: bool = False
    generation: int = 0
    topn_split: int = 1
    report: RecordedReport

    @property
    def interval(self) -> str:
        return self.report.interval

    @property
    def watermark(self) -> str | int | None:
        return self.report.watermark

    @property
    def stream_report(self) -> StreamReport:
        """A scheduled run's report (what its parity and the next run read)."""
        if not isinstance(self.report, StreamReport):
            raise TypeError(f"run {self.interval}: a bounded run's record")  # a bug
        return self.report


def record_run(state: Path, key: str, first_batch: int, last_batch: int,
               report: RecordedReport, replayed: bool = False, topn_split: int = 1) -> None:
    """Record what the run ``key`` covered (module docstring), after its stream step."""
    staged = Manifest.load(state)
    tables = staged.tables
    (state / RUNS).mkdir(parents=True, exist_ok=True)
    RunRecord(parts={t: e.parts for t, e in tables.items()},
              rows={t: e.rows for t, e in tables.items()}, first_batch=first_batch,
              last_batch=last_batch, replayed=replayed, generation=staged.generation,
              topn_split=topn_split, report=report).write(state / RUNS / f"{key}.json")


def run_keys(state: Path) -> list[str]:
    """The keys of the recorded runs, oldest first."""
    return sorted(p.stem for p in (state / RUNS).glob("*.json"))


def run_record(state: Path, key: str) -> RunRecord | None:
    """What the run ``key`` covered (``record_run``), None if it has no record."""
    path = state / RUNS / f"{key}.json"
    return RunRecord.read(path) if path.exists() else None


def previous_record(state: Path, key: str) -> RunRecord | None:
    """The record of the newest run before ``key`` (None for the first)."""
    keys = [k for k in run_keys(state) if k < key]
    return run_record(state, keys[-1]) if keys else None


def offer(state: Path, key: str, parts: list[Path], ends: TableDef | None = None) -> None:
    """Offer table ``key``'s staged files to the stream and, where ``ends`` (the table) is
    given, the end of its input (ingest.write_eof); what was offered before stays offered
    (io/offers.py)."""
    source = state / "staged" / key
    if ends is not None:
        ingest.write_eof(ends, source)
    offers.offer(source, parts, eof=ends is not None)


def offer_sweep(state: Path, tables: dict[str, TableDef], batch: int) -> None:
    """Stage and offer a state sweep (compaction.py) to every table's source, to be read in
    micro-batch ``batch``."""
    for key, table in tables.items():
        if not table.constant:
            source = state / "staged" / key
            offers.offer(source, [ingest.write_sweep(table, offers.sweep_file(source, batch),
                                                     BUCKETS)])


def input_ended(state: Path, tables: list[str]) -> bool:
    """Whether the end of every table's input has been offered to the stream."""
    return all(offers.ended(state / "staged" / t) for t in tables)


def stream(spark: SparkSession, plan: Node, state: Path, tables: list[str],
           rows_per_batch: int, runtime: SparkRuntime = SPARK,
           on_progress: Callable[[dict], None] | None = None) -> StreamRun:
    """Run the streaming query over what its tables' sources have been offered, from the
    state's checkpoint to the end of that input (``availableNow``); its changelog rows carry
    their CSV line (output.copy_changelog writes changelog.csv from it)."""
    sources = {t: state / "staged" / t for t in tables}
    for d in sources.values():
        if not (d / offers.LOG).is_dir():  # nothing offered: read nothing, whatever is there
            offers.offer(d, [])
    df = stream_dataframe(spark, plan, sources, rows_per_batch, runtime).withColumn(
        LINE, changelog_line([(f.name, f.type) for f in plan.fields]))
    return runtime.run(df, state / "checkpoint", state / "changelog", on_progress)
