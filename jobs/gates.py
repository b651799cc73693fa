"""The non-Spark steps of a scheduled run: the quality gate and the atomic publish."""

from __future__ import annotations

from pathlib import Path

from operators_lib.ops import metrics
from operators_lib.ops.quality import validate_csv
from operators_lib.ops.reports import ParityReport, StreamReport
from operators_lib.paths import state_dir
from operators_lib.runs.query_config import QueryConfig


class GateFailed(RuntimeError):
    """The output failed its expectations: the run fails and nothing is published."""


def validate(cfg: QueryConfig, run: Path) -> dict:
    stream, parity = StreamReport.load(run), ParityReport.load(run)
    runtime = []
    if cfg.one_row_per_input_row:
        # OVER emits one row per on-time input row once the watermark passes it: the run's
        # output holds exactly the rows parity checked, one per input row it emitted.
        runtime.append({"type": "expect_table_row_count_to_equal",
                        "kwargs": {"value": parity.emitted_rows}})
    summary = validate_csv(run / "stream.csv", cfg.expectations, runtime,
                           run / "validation.json")
    summary["late_rows"], summary["watermark"] = stream.late_rows, stream.watermark
    # Staging already refused more than max_rejected_rows; these are the ones accepted.
    summary["rejected_rows"] = stream.rejected_rows
    metrics.record_outcome(state_dir(cfg.name), run.name, gate=(
        "failed" if not summary["success"] else
        "passed_with_warnings" if summary["warnings"] else "passed"))
    if not summary["success"]:
        raise GateFailed(f"{cfg.name}: {len(summary['failed'])} expectation(s) failed: "
                         f"{summary['failed']}")
    return summary


def published_numbers(published: Path, run_key: str) -> dict:
    """What a published run tells downstream consumers (the query Asset's event extra)."""
    stream, parity = StreamReport.load(published), ParityReport.load(published)
    with open(published / "stream.csv", "rb") as fh:
        rows = sum(1 for _ in fh) - 1
    return {"interval": run_key, "path": str(published), "rows": rows,
            "new_input_rows": sum(stream.new_input_rows.values()),
            "late_rows": stream.late_rows, "rejected_rows": stream.rejected_rows,
            "watermark": stream.watermark, "parity": parity.verdict, "rerun": stream.rerun}


def publish(cfg: QueryConfig, run: Path, run_key: str) -> Path:
    """The validated run published (runs/publishing.py: all or nothing); returns where."""
    from operators_lib.runs import lifecycle  # Spark's modules: not for the gate's task
    from operators_lib.runs.spec import RunSpec, Steps

    spec = RunSpec.scheduled(cfg, state_dir(cfg.name), run, run_key)
    return lifecycle.run(spec, None, Steps.PUBLISH).published
