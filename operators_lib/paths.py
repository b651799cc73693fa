"""Where scheduled runs keep state, run outputs and published results ($TWINFLOW_HOME: a
local path, or an ``s3a://`` / ``hdfs://`` URI reached through the process's Store,
io/storage.py), and where their configs are ($TWINFLOW_QUERIES).

In a source checkout the repository's folders are the defaults; an installed twinflow (a
wheel in site-packages) has none, and a setting it needs is an InputError naming it."""

from __future__ import annotations

import json
import os
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from operators_lib.errors import InputError
from operators_lib.io import uris

if TYPE_CHECKING:  # the DAG files import this module: pyarrow only where a URI is used
    from operators_lib.io.storage import Place

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


def home() -> Place:
    where = uris.location(setting("TWINFLOW_HOME", REPO / ".twinflow"), "TWINFLOW_HOME")
    if isinstance(where, Path):
        return where
    from operators_lib.io import storage

    return storage.place(where, "TWINFLOW_HOME")


def local_dir() -> Path:
    """What must be on the local disk of the machine that runs a step: the code archive
    spark-submit ships, Great Expectations' validation results and Data Docs.
    ``$TWINFLOW_HOME`` where it is a local path, else ``$TWINFLOW_LOCAL_DIR`` (default
    ``~/.cache/twinflow``)."""
    if isinstance(where := home(), Path):
        return where
    return Path(os.environ.get("TWINFLOW_LOCAL_DIR") or Path.home() / ".cache" / "twinflow")


def state_dir(query: str) -> Place:
    """Checkpoint, staged input and changelog of a query: kept across runs."""
    return home() / "state" / query


def run_dir(query: str, run_key: str) -> Place:
    """Candidate outputs of one scheduled run (keyed by its data interval)."""
    return home() / "runs" / query / run_key


def chosen_settings(query: str) -> Place:
    """Settings the maintenance DAGs chose for a query (the hotspot split), over its config:
    kept here, not in the DAG folder, which may be read-only or a git bundle."""
    return home() / "config" / f"{query}.json"


def append_audit(query: str, record: dict) -> None:
    """Add a maintenance decision or action to the query's audit log
    (``$TWINFLOW_HOME/audit/<query>/``: hotspot splits, state compactions), one file per
    record named for when it was written, so that it sorts in time order: a store has no
    append, and two DAGs of a query may write at once."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    from operators_lib.io import storage

    entry = home() / "audit" / query / f"{stamp}-{uuid.uuid4().hex[:8]}.json"
    with storage.writing([entry]) as (out,):
        out.write(json.dumps(record, default=str).encode())


def gx_root() -> Path:
    """The directory that holds the Great Expectations context (``gx/``)."""
    return setting("TWINFLOW_GX_ROOT", REPO / "expectations")


def reports_dir() -> Place:
    """The queries' ops reports (``<query>.html``) the DAGs render."""
    return home() / "reports"


def published_dir(query: str) -> Place:
    return home() / "published" / query


def queries_dir() -> Path:
    return setting("TWINFLOW_QUERIES", REPO / "dags" / "queries")
