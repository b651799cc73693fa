"""The record step of every run that streamed: what its stream step covered, in the state's
run records (state/lifecycle.record_run: what a re-run, parity, audit and backfill read), and
its row in the metrics history (ops/history.py: the ops view)."""

from __future__ import annotations

from operators_lib.ops import history
from operators_lib.runs.staging import Run
from operators_lib.runs.streaming import Streamed
from operators_lib.state import lifecycle
from operators_lib.stream.runner import StreamRun


def record(run: Run, srun: StreamRun, streamed: Streamed) -> None:
    """Record the run's stream step; its metrics row is of kind "twinflow run" (bounded) or
    "scheduled", with per table its new rows, watermark and how long its oldest new file
    waited (scheduled runs)."""
    spec = run.spec
    lifecycle.record_run(spec.state, spec.key, streamed.first_batch, streamed.last_batch,
                         streamed.recorded, replayed=run.replayed, topn_split=spec.topn_split)
    tables = {k: t for k, t in run.tables.items() if not t.constant}
    marks = lifecycle.table_watermarks(spec.state, tables)
    history.record_run(spec.state, spec.key, "twinflow run" if spec.bounded else "scheduled",
                       srun.progress, sum(run.new_rows.values()), run.parsed.rejected(),
                       streamed.late_rows, srun.seconds,
                       [(t.name, run.new_rows.get(k, 0), marks[k], (run.waited or {}).get(k))
                        for k, t in tables.items()])
