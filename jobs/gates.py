"""The non-Spark steps of a scheduled run: the quality gate and the atomic publish."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from operators_lib.io.output import write_text
from operators_lib.ops import metrics
from operators_lib.ops.quality import validate_csv
from operators_lib.paths import published_dir, state_dir
from operators_lib.runs.query_config import QueryConfig


class GateFailed(RuntimeError):
    """The output failed its expectations: the run fails and nothing is published."""


def validate(cfg: QueryConfig, run: Path) -> dict:
    stream = json.loads((run / "stream_report.json").read_text())
    parity = json.loads((run / "parity.json").read_text())
    runtime = []
    if cfg.one_row_per_input_row:
        # OVER emits one row per on-time input row once the watermark passes it: the run's
        # output holds exactly the rows parity checked, one per input row it emitted.
        expected = parity["emitted_rows"]
        runtime.append({"type": "expect_table_row_count_to_equal",
                        "kwargs": {"value": expected}})
    summary = validate_csv(run / "stream.csv", cfg.expectations, runtime,
                           run / "validation.json")
    summary["late_rows"], summary["watermark"] = stream["late_rows"], stream["watermark"]
    # Staging already refused more than max_rejected_rows; these are the ones accepted.
    summary["rejected_rows"] = stream["rejected_rows"]
    metrics.record_outcome(state_dir(cfg.name), run.name, gate=(
        "failed" if not summary["success"] else
        "passed_with_warnings" if summary["warnings"] else "passed"))
    if not summary["success"]:
        raise GateFailed(f"{cfg.name}: {len(summary['failed'])} expectation(s) failed: "
                         f"{summary['failed']}")
    return summary


def published_numbers(published: Path, run_key: str) -> dict:
    """What a published run tells downstream consumers (the query Asset's event extra)."""
    stream = json.loads((published / "stream_report.json").read_text())
    parity = json.loads((published / "parity.json").read_text())
    with open(published / "stream.csv", "rb") as fh:
        rows = sum(1 for _ in fh) - 1
    return {"interval": run_key, "path": str(published), "rows": rows,
            "new_input_rows": sum(stream["new_input_rows"].values()),
            "late_rows": stream["late_rows"], "rejected_rows": stream["rejected_rows"],
            "watermark": stream["watermark"], "parity": parity["verdict"],
            "rerun": bool(stream.get("rerun"))}


def publish(cfg: QueryConfig, run: Path, run_key: str) -> Path:
    """Copy the validated run into published/<query>/<run_key>/ in one rename, then point
    ``LATEST`` at it (also a rename) unless a later interval is published: readers see the old
    or the new version, never half."""
    target_root = published_dir(cfg.name)
    target_root.mkdir(parents=True, exist_ok=True)
    tmp = target_root / f".{run_key}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    for name in ("stream.csv", "changes.csv", "batch.csv", "parity.json", "validation.json",
                 "stream_report.json", "rejected.csv"):
        if (run / name).exists():
            shutil.copy2(run / name, tmp / name)
    final = target_root / run_key
    if final.exists():  # a re-run of the same interval replaces its own version
        shutil.rmtree(final)
    os.replace(tmp, final)
    latest = target_root / "LATEST"
    if not latest.exists() or latest.read_text().strip() <= run_key:
        # A re-run of an earlier interval replaces its own version only.
        write_text(latest, run_key + "\n")
    return final
