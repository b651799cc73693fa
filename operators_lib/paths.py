"""Where scheduled runs keep state, run outputs and published results ($TWINFLOW_HOME)."""

from __future__ import annotations

import json
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def home() -> Path:
    return Path(os.environ.get("TWINFLOW_HOME", REPO / ".twinflow"))


def state_dir(query: str) -> Path:
    """Checkpoint, staged input and changelog of a query: kept across runs."""
    return home() / "state" / query


def run_dir(query: str, run_key: str) -> Path:
    """Candidate outputs of one scheduled run (keyed by its data interval)."""
    return home() / "runs" / query / run_key


def chosen_settings(query: str) -> Path:
    """Settings the maintenance DAGs chose for a query (the hotspot split), over its config:
    kept here, not in the DAG folder, which may be read-only or a git bundle."""
    return home() / "config" / f"{query}.json"


def append_audit(query: str, record: dict) -> None:
    """Append a maintenance decision or action to the query's audit log
    (``$TWINFLOW_HOME/audit/<query>.jsonl``: hotspot splits, state compactions)."""
    log = home() / "audit" / f"{query}.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "a") as fh:
        fh.write(json.dumps(record, default=str) + "\n")


def published_dir(query: str) -> Path:
    return home() / "published" / query


def queries_dir() -> Path:
    return Path(os.environ.get("TWINFLOW_QUERIES", REPO / "dags" / "queries"))
