"""The DAG's scheduled steps in-process, as jobs/twinflow_job.py runs them: each one a call of
the one entry point (runs/lifecycle.run) with the query's RunSpec."""

from __future__ import annotations

from pathlib import Path

from operators_lib.runs.lifecycle import run
from operators_lib.runs.query_config import QueryConfig
from operators_lib.runs.spec import RunSpec, Steps


def stream_increment(cfg: QueryConfig, spark, state: Path, run_dir: Path) -> dict:
    return run(RunSpec.scheduled(cfg, state, run_dir), spark, Steps.STREAM).report


def batch_parity(cfg: QueryConfig, spark, state: Path, run_dir: Path) -> dict:
    return run(RunSpec.scheduled(cfg, state, run_dir), spark, Steps.PARITY).report


def audit(cfg: QueryConfig, spark, state: Path, out: Path) -> dict:
    return run(RunSpec.scheduled(cfg, state, out), spark, Steps.AUDIT).report


def backfill(cfg: QueryConfig, spark, state: Path, out: Path, start: str, end: str) -> dict:
    return run(RunSpec.scheduled(cfg, state, out, start, end), spark, Steps.BACKFILL).report
