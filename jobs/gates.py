"""The non-Spark steps of a scheduled run: the quality gate's verdict and the atomic publish."""

from __future__ import annotations

import json

from operators_lib.errors import StateError
from operators_lib.io import storage
from operators_lib.io.storage import Place
from operators_lib.ops.reports import VALIDATION, ParityReport, StreamReport
from operators_lib.paths import state_dir
from operators_lib.runs.query_config import QueryConfig


class GateFailed(RuntimeError):
    """The output failed its expectations: the run fails and nothing is published."""


def validate(cfg: QueryConfig, run_dir: str) -> dict:
    """The gate's verdict on the run (its Spark step validated the rows: runs/gating.py), with
    the run's late and rejected rows and watermark; GateFailed if a critical expectation
    failed."""
    run = storage.place(run_dir, "the run's directory")
    try:
        summary = json.loads((run / VALIDATION).read_text())
    except FileNotFoundError:
        raise StateError(f"{cfg.name}: {run} has no {VALIDATION}: its Spark step did not gate it "
                         "(run the step again)") from None
    stream = StreamReport.load(run)
    summary["late_rows"], summary["watermark"] = stream.late_rows, stream.watermark
    # Staging already refused more than max_rejected_rows; these are the ones accepted.
    summary["rejected_rows"] = stream.rejected_rows
    if not summary["success"]:
        raise GateFailed(f"{cfg.name}: {len(summary['failed'])} expectation(s) failed: "
                         f"{summary['failed']}")
    return summary


def published_numbers(published: Place, run_key: str) -> dict:
    """What a published run tells downstream consumers (the query Asset's event extra)."""
    stream, parity = StreamReport.load(published), ParityReport.load(published)
    if (published / "stream.parquet").exists():
        rows = storage.parquet_rows(published / "stream.parquet")
    else:
        with (published / "stream.csv").open("rb") as fh:
            rows = sum(1 for _ in fh) - 1
    return {"interval": run_key, "path": str(published), "rows": rows,
            "new_input_rows": sum(stream.new_input_rows.values()),
            "late_rows": stream.late_rows, "rejected_rows": stream.rejected_rows,
            "watermark": stream.watermark, "parity": parity.verdict, "rerun": stream.rerun}


def publish(cfg: QueryConfig, run_dir: str, run_key: str) -> Place:
    """The validated run published (runs/publishing.py: all or nothing); returns where."""
    from operators_lib.runs import lifecycle  # Spark's modules: not for the gate's task
    from operators_lib.runs.spec import RunSpec, Steps

    run = storage.place(run_dir, "the run's directory")
    spec = RunSpec.scheduled(cfg, state_dir(cfg.name), run, run_key)
    return lifecycle.run(spec, None, Steps.PUBLISH).published
