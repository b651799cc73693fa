"""The reports of a run, typed: built as these objects by the steps (runs/staging.py,
runs/streaming.py, runs/checking.py, runs/publishing.py, runs/backfill.py), written and read
here, read by attribute (jobs/gates.py, jobs/run_output.py, the demo):

    report.json          a bounded run's (``twinflow run``): ``BoundedReport``
    stream_report.json   a scheduled run's stream step (and a backfill's): ``StreamReport``
    parity.json          a scheduled run's parity (audit.json: the audit's): ``ParityReport``

A run record (state/lifecycle.RunRecord) keeps a scheduled run's ``StreamReport`` or a bounded
run's ``BoundedRecord``. The files keep the keys the dicts these replaced had: a field that a
step did not set is not written (io/records.py's rule), so an optional section or count is
absent, not null, where it was absent before; a field set to None is written as null."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, ClassVar, Self

from pydantic import Discriminator, Field, Tag

from operators_lib.io.records import Record

# The quality gate's verdict on a run (runs/gating.py writes it, jobs/gates.py reads it).
VALIDATION = "validation.json"

# A watermark as the stream's progress gives it: ISO text (Spark), epoch ms (the operator
# harness of tests/), None before the first.
Watermark = str | int | None
Sample = list[list[str | None]]  # rows as text, None for NULL


class Report(Record):
    """A report in its run's directory, as ``FILE``."""

    FILE: ClassVar[str]

    @classmethod
    def load(cls, run: Path) -> Self:
        return cls.read(run / cls.FILE)

    def save(self, run: Path) -> None:
        run.mkdir(parents=True, exist_ok=True)
        self.write(run / self.FILE)


class Column(Record):
    name: str
    type: str  # its SQL type


class Rebuilt(Record):
    """Why and how a scheduled query's state was rebuilt (runs/binding.bind_state)."""

    reason: str
    from_split: int
    to_split: int
    from_layout: str
    to_layout: str
    retired: str
    replayed_input_rows: int


class StreamReport(Report):
    """A scheduled run's stream step: what staging found, then what the stream emitted
    (runs/streaming.materialize), then how long the task took; a re-run's is its interval's
    recorded report with ``rerun``. A backfill's has its interval's counts only."""

    FILE: ClassVar[str] = "stream_report.json"

    query: str | None = None
    interval: str | None = None
    backfill: bool = False
    new_input_rows: dict[str, int] = Field(default_factory=dict)  # per table name
    rejected_rows: int | None = None
    max_rejected_rows: int | None = None
    topn_split: int | None = None
    state_rebuilt: Rebuilt | None = None
    micro_batches: int | None = None
    stream_seconds: float | None = None
    emitted_rows: int | None = None
    changelog_rows: int | None = None
    late_rows: int | None = None
    late_row_windows: int | None = None
    session_splits: int | None = None
    # Over every run of the state (0: a report of a twinflow that did not count them).
    emitted_rows_total: int = 0
    session_splits_total: int = 0
    input_rows_total: int | None = None
    watermark: Watermark = None
    state_rows: int | None = None
    shuffle_partitions: int | None = None
    seconds: float | None = None
    rerun: bool = False
    # The result's columns (stream.csv's), which the quality gate reads it back with.
    columns: list[Column] = Field(default_factory=list)


class DiffSummary(Record):
    """How two results differ (parity/compare.Diff.summary): the rows only one has, and a
    sample of them."""

    only_in_batch: int
    only_in_stream: int
    sample_only_in_batch: Sample
    sample_only_in_stream: Sample


class ParityInput(Record):
    """What a scheduled run's parity read of the staged input (parity/scope.py)."""

    from_event_time: str | None = None
    staged_parts: int | None = None
    touched_keys: int | None = None
    key: list[str] | None = None


class Unemitted(Record):
    """On-time rows the watermark has passed that no run emitted (the audit): lost rows."""

    rows: int
    sample: Sample


class ParityReport(Report):
    """A parity verdict and what it rests on: a bounded run's report's ``parity`` section
    (parity/verdict.py), a scheduled run's parity.json, the audit's audit.json
    (runs/checking.py), a backfill's parity.json. Which fields are set depends on the verdict
    and the query."""

    FILE: ClassVar[str] = "parity.json"
    AUDIT: ClassVar[str] = "audit.json"

    verdict: str
    reason: str | None = None
    rows: int | None = None
    explanation: str | None = None
    note: str | None = None
    late_rows: int | None = None
    late_row_windows: int | None = None
    ttl_expired_keys: int | None = None
    session_splits: int | None = None
    parity_input: ParityInput | None = None
    emitted_rows: int | None = None
    emitted_rows_total: int | None = None
    pending_rows: int | None = None
    emitted_windows: int | None = None
    emitted_windows_total: int | None = None
    pending_windows: int | None = None
    unemitted_behind_watermark: Unemitted | None = None
    input_rows: int | None = None
    only_in_batch: int | None = None
    only_in_stream: int | None = None
    sample_only_in_batch: Sample | None = None
    sample_only_in_stream: Sample | None = None
    unexplained: DiffSummary | None = None
    interval: str | None = None
    last_batch: int | None = None

    def add_diff(self, diff: DiffSummary) -> None:
        """The difference it rests on, beside the verdict."""
        self.only_in_batch, self.only_in_stream = diff.only_in_batch, diff.only_in_stream
        self.sample_only_in_batch = diff.sample_only_in_batch
        self.sample_only_in_stream = diff.sample_only_in_stream

    def save_audit(self, run: Path) -> None:
        run.mkdir(parents=True, exist_ok=True)
        self.write(run / self.AUDIT)


class TableCounts(Record):
    """A bounded run's input table: its rows, accepted and rejected, and its micro-batch
    files."""

    input_rows: int
    accepted_rows: int
    rejected_rows: int
    micro_batch_files: int


class SparkSettings(Record):
    """The Spark settings in force (the user's where given: engine/spark.py)."""

    master: str
    app: str
    shuffle_partitions: int
    # A resumed stream keeps the shuffle partitions its checkpoint was written with.
    stream_shuffle_partitions: int | None = None


class ProgressSummary(Record):
    """The stream's last progress (nothing: no micro-batch ran)."""

    batch_id: int | None = None
    watermark: Watermark = None
    input_rows_total: int | None = None  # Spark's count: the end-of-input markers included
    state_rows: int | None = None
    state_memory_bytes: int | None = None


class StreamCounts(Record):
    """What a bounded run's stream step did (its report's ``stream`` section, its record; a
    record of an earlier twinflow may lack a count: None)."""

    complete: bool | None = None
    micro_batches_this_run: int | None = None
    changelog_rows: int | None = None
    rows: int | None = None
    late_rows: int | None = None
    late_row_windows: int | None = None
    session_splits: int | None = None
    ttl_expired_keys: int | None = None  # set to None: the query has no state TTL
    recomputed_from_scratch: str | None = None  # why an unfinished stream state was discarded


class StreamSection(StreamCounts):
    """A bounded run's report's ``stream`` section."""

    last_progress: ProgressSummary
    note: str | None = None  # a stopped stream: how to resume it


class BoundedRecord(StreamCounts):
    """What a bounded run's record keeps of its stream step (state/lifecycle.RunRecord)."""

    interval: str | None = None
    watermark: Watermark = None


class BatchCount(Record):
    rows: int


class BoundedReport(Report):
    """A bounded run's report.json, built step by step: staging's part (runs/staging.py), the
    stream's, batch's and parity's sections, then what publishing adds."""

    FILE: ClassVar[str] = "report.json"

    sql: list[str]
    mode: str
    rows_per_batch: int
    topn_split: int
    tables: dict[str, TableCounts]  # per table name
    columns: list[Column]
    warnings: list[str]
    spark: SparkSettings
    timings_s: dict[str, float]  # per step, and "total"
    stream: StreamSection | None = None
    batch: BatchCount | None = None
    parity: ParityReport | None = None
    late_rows: int | None = None
    rejected_rows: int | None = None
    udf_rejected_rows: int | None = None
    outputs: dict[str, str] = Field(default_factory=dict)  # file name -> path


class BackfillReport(Record):
    """What a backfill recomputed: per interval its rows (runs/backfill.py)."""

    query: str
    intervals: dict[str, int]


def _recorded_kind(report: Any) -> str:
    """Which report a run record keeps: a bounded run's has its stream's ``complete``."""
    if isinstance(report, dict):
        return "bounded" if "complete" in report else "scheduled"
    return "bounded" if isinstance(report, BoundedRecord) else "scheduled"


# What a run record keeps of its run's report (state/lifecycle.RunRecord).
RecordedReport = Annotated[Annotated[StreamReport, Tag("scheduled")]
                           | Annotated[BoundedRecord, Tag("bounded")],
                           Discriminator(_recorded_kind)]
