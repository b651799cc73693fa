"""What a run is asked to do: a frozen run specification (``RunSpec``) and the steps a caller
wants of it (``Steps``); ``runs.lifecycle.run(spec, spark, steps)`` runs them.

A run covers one data interval of a query's state. A bounded run (``twinflow run``) is one
interval plus the end of the input: its state is ``--out DIR/_state``, its key the UTC time it
started. A scheduled run (the DAGs) is keyed by its data interval (the run directory's name),
its state is ``$TWINFLOW_HOME/state/<query>`` and the stream goes on after it. A sweep run
is a state command's (runs/compaction.py, runs/verify.py): one more stream over what a state
has been offered, with a state sweep (or, resuming a snapshot, nothing new); the command
plans the query the state records and holds the state meanwhile."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

from operators_lib.ops.reports import BackfillReport, BoundedReport, ParityReport, StreamReport
from operators_lib.runs.query_config import QueryConfig

if TYPE_CHECKING:  # the CLI checks a run's spec before it imports pyspark
    from operators_lib.io.sink_files import Sink
    from operators_lib.io.storage import Place
    from operators_lib.stream.runner import StreamRun

MODES = ("batch", "stream", "both")


@dataclass(frozen=True)
class StreamProgress:
    """How far the stream of a bounded run has read its input."""

    micro_batch: int  # the micro-batch that ended (its id)
    input_read: float  # the share of the offered input files read, 0..1


# Called after each step of a bounded run ("ingest", "stream", "batch", "parity") with the
# report so far, and while the stream runs with ("stream_progress", StreamProgress).
Listener = Callable[[str, BoundedReport | StreamProgress], None]


class Steps(Enum):
    """What a caller asks of a run (runs/lifecycle.py runs the steps each one takes)."""

    RUN = "run"            # twinflow run: stage, offer, stream, materialize, record, batch,
    #                        parity, publish (outputs and report.json)
    STREAM = "stream"      # a DAG's stream task: stage, offer, stream, materialize, record
    PARITY = "parity"      # a DAG's parity task: the interval's emitted rows against batch
    AUDIT = "audit"        # everything emitted up to the newest run against batch
    BACKFILL = "backfill"  # batch results of the recorded intervals ``key`` .. ``through``
    PUBLISH = "publish"    # a DAG's publish task, after its gate: the run into published/
    SWEEP = "sweep"        # a state command's: offer its sweep (``RunSpec.sweep``), stream


@dataclass(frozen=True)
class RunSpec:
    name: str                     # the scheduled query's name ("run" for twinflow run)
    sql: tuple[Path, ...]
    inputs: Mapping[str, Path | str]  # table -> its file or landing directory (or URI)
    state: Place                  # the query's state directory (state/lifecycle.py)
    out: Place                    # the run's outputs: --out, or the DAG run's directory
    key: str                      # the data interval, or the bounded run's start time
    rows_per_batch: int | None    # None: from the input's size (bounded runs only)
    topn_split: int = 1           # hotspot split factor of every TopN (topn_split.py)
    bounded: bool = False         # the input ends with this run (twinflow run)
    mode: str = "both"            # bounded runs: batch | stream | both
    stop_after_batches: int | None = None  # bounded runs: offer only the first N parts
    max_rejected_rows: int = 0    # scheduled runs: malformed rows a run may set aside
    through: str | None = None    # a backfill's last interval
    sweep: int | None = None      # a sweep run: the micro-batch its sweep is read in
    skip_older_folders: bool = False  # scheduled runs: list from the newest file's folders
    publish_format: str = "csv"   # a scheduled run's results: csv | parquet (output.write_result)
    sink: Sink | None = None      # the files an INSERT INTO writes (io/sink_files.py)

    @classmethod
    def bounded_run(cls, sql: list[Path], data: Mapping[str, Path | str], mode: str, out: Place,
                    rows_per_batch: int | None = None,
                    stop_after_batches: int | None = None, topn_split: int = 1) -> RunSpec:
        """``twinflow run``: its state under ``out``/_state, keyed by the time it starts."""
        return cls("run", tuple(Path(p) for p in sql),
                   {k: v if isinstance(v, str) else Path(v) for k, v in data.items()},
                   out / "_state", out, datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%f"),
                   rows_per_batch, topn_split, True, mode, stop_after_batches)

    @classmethod
    def scheduled(cls, cfg: QueryConfig, state: Place, run_dir: Place, key: str | None = None,
                  through: str | None = None) -> RunSpec:
        """A DAG run of ``cfg``'s query, keyed by its data interval (default: ``run_dir``'s
        name; a backfill: ``key`` the first interval, ``through`` the last)."""
        return cls(cfg.name, tuple(cfg.sql), dict(cfg.inputs), state, run_dir,
                   key or run_dir.name,
                   cfg.rows_per_batch, cfg.topn_split, max_rejected_rows=cfg.max_rejected_rows,
                   through=through, skip_older_folders=cfg.skip_older_folders,
                   publish_format=cfg.publish_format)

    @classmethod
    def sweep_run(cls, state: Path, rows_per_batch: int, sweep: int | None) -> RunSpec:
        """A state command's sweep run over ``state`` (module docstring), its micro-batches
        of the size the state records; ``sweep``: None offers no sweep (a snapshot resumed)."""
        return cls(state.name, (), {}, state, state, f"sweep-{sweep}", rows_per_batch,
                   sweep=sweep)


# What a run reports: a bounded run's report, a scheduled run's stream report, a parity or an
# audit, a backfill (ops/reports.py).
Report = BoundedReport | StreamReport | ParityReport | BackfillReport


@dataclass
class Outcome:
    """How a run ended: its exit code (1: parity failed), its report (None: the publish step
    reports nothing), what to tell the user."""

    exit_code: int
    report: Report | None = None
    message: str = ""
    published: Place | None = None  # where the publish step put the run's outputs
    stream: StreamRun | None = None  # a sweep run's stream (what its state command reports)
