"""A query state's ``manifest.json`` (lifecycle.py's docstring says what it records), typed: the
one place that reads and writes it, and where each key's default is.

A manifest written by an earlier twinflow lacks the keys it did not know yet: they read as
their defaults (no ``query``: None; no ``state_layout``: ``UNRECORDED``, what states were
written with before layouts were recorded; no ``generation``: 0; no ``topn_split``: 1) and stay
absent when the manifest is saved again, until a run sets them (io/records.py's rule). A key
this twinflow does not know is kept and saved back (io/records.py says why)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from operators_lib.io.records import Record
from operators_lib.stream.layout import UNRECORDED

MANIFEST = "manifest.json"


class StagedFile(Record):
    """An input file staged into a table: its accepted and rejected rows, and the number of its
    first row among the table's (what a rejected row's file is found by)."""

    rows: int
    rejected: int
    first_row: int


class StagedTable(Record):
    """What is staged of one table: its input files by name, its rows, its micro-batch files
    (``staged/<table>/part-NNNNNN.parquet``) and its latest event time (epoch ms; None: none
    yet, or no WATERMARK)."""

    files: dict[str, StagedFile] = Field(default_factory=dict)
    rows: int = 0
    parts: int = 0
    max_event_ms: int | None = None


class SqlFile(Record):
    """One SQL file of a recorded query: its name, its text and its directory (where a Python
    UDF's module is found; None: recorded before directories were)."""

    file: str
    text: str
    dir: str | None = None


class RecordedQuery(Record):
    """The query the state's stream runs (queries.record_query)."""

    sql: list[SqlFile]
    topn_split: int
    rows_per_batch: int
    state_layout: str | None = None  # None: recorded before layouts were


class BoundedRun(Record):
    """A bounded run's stream (staging.set_run_status): what it may resume with, and how it
    ended ("running", "stopped", "complete")."""

    fingerprint: str | None = None
    status: str | None = None


class Manifest(Record):
    """A state's manifest (module docstring)."""

    tables: dict[str, StagedTable] = Field(default_factory=dict)
    # Scheduled runs: what the state was built with (runs/binding.bind_state).
    topn_split: int = 1
    state_layout: str = UNRECORDED
    generation: int = 0
    query: RecordedQuery | None = None
    run: BoundedRun | None = None  # bounded runs only

    @classmethod
    def load(cls, state: Path) -> Manifest:
        """The state's manifest; a state with none has no table staged yet."""
        path = state / MANIFEST
        return cls.read(path) if path.exists() else cls(tables={})

    def save(self, state: Path) -> None:
        state.mkdir(parents=True, exist_ok=True)
        self.write(state / MANIFEST)

    def table(self, key: str) -> StagedTable:
        """What is staged of table ``key`` (nothing yet: an empty entry, not recorded)."""
        return self.tables.get(key) or StagedTable()

    @property
    def staged_rows(self) -> int:
        """The rows staged in all tables."""
        return sum(t.rows for t in self.tables.values())
