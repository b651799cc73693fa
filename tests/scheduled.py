"""The DAG's scheduled steps in-process, as jobs/twinflow_job.py runs them: each one a call of
the one entry point (runs/lifecycle.run) with the query's RunSpec; each returns its report as
the job prints it (its JSON)."""

from __future__ import annotations

from pathlib import Path

from operators_lib.runs.lifecycle import run
from operators_lib.runs.query_config import QueryConfig
from operators_lib.runs.spec import RunSpec, Steps


def stream_increment(cfg: QueryConfig, spark, state: Path, run_dir: Path) -> dict:
    return run(RunSpec.scheduled(cfg, state, run_dir), spark, Steps.STREAM).report.as_json()


def batch_parity(cfg: QueryConfig, spark, state: Path, run_dir: Path) -> dict:
    return run(RunSpec.scheduled(cfg, state, run_dir), spark, Steps.PARITY).report.as_json()


def audit(cfg: QueryConfig, spark, state: Path, out: Path) -> dict:
    return run(RunSpec.scheduled(cfg, state, out), spark, Steps.AUDIT).report.as_json()


def backfill(cfg: QueryConfig, spark, state: Path, out: Path, start: str, end: str) -> dict:
    spec = RunSpec.scheduled(cfg, state, out, start, end)
    return run(spec, spark, Steps.BACKFILL).report.as_json()
