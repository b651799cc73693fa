"""Where scheduled runs keep state, run outputs and published results ($TWINFLOW_HOME), and
where their configs are ($TWINFLOW_QUERIES).

In a source checkout the repository's folders are the defaults; an installed twinflow (a
wheel in site-packages) has none, and a setting it needs is an InputError naming it."""

from __future__ import annotations

import json
import os
from pathlib import Path

from operators_lib.errors import InputError

REPO = Path(__file__).resolve().parents[1]
CHECKOUT = (REPO / "pyproject.toml").is_file()


def setting(variable: str, in_checkout: Path) -> Path:
    """The directory the environment variable names, else a checkout's default."""
    if value := os.environ.get(variable):
        return Path(value)
    if CHECKOUT:
        return in_checkout
    raise InputError(f"{variable} is not set: an installed twinflow has no default for it "
                     "(docs/DEPLOY.md)")


def home() -> Path:
    return setting("TWINFLOW_HOME", REPO / ".twinflow")


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


def gx_root() -> Path:
    """The directory that holds the Great Expectations context (``gx/``)."""
    return setting("TWINFLOW_GX_ROOT", REPO / "expectations")


def reports_dir() -> Path:
    """The queries' ops reports (``<query>.html``) the DAGs render."""
    return home() / "reports"


def published_dir(query: str) -> Path:
    return home() / "published" / query


def queries_dir() -> Path:
    return setting("TWINFLOW_QUERIES", REPO / "dags" / "queries")
