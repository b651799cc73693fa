"""Snapshots of a query's state directory (``twinflow state snapshot|list|rollback``).

A state directory (lifecycle.py) is ``DIR/_state`` of a ``twinflow run --out DIR`` or a
scheduled query's ``$TWINFLOW_HOME/state/<query>``; the commands take either ``DIR`` or the
state directory itself. A snapshot is everything a resume needs, taken as one unit while no
run holds the state (``lifecycle.locked``): the manifest, the run records, the checkpoint,
the changelog, the materialized result, the left-out rows, and the staged input with its
offer logs. Staged parts are immutable, so a snapshot links them (a copy where the file
system cannot link: a store); the rest is copied. It is written whole (storage.whole_dir:
under ``snapshots/.<id>.tmp`` renamed into place where the store renames; its
``snapshot.json`` last on every store): a snapshot is one with its ``snapshot.json``.

The snapshot stands at the checkpoint's last committed micro-batch (its ``batch_id``). A
micro-batch Spark had planned but not committed is copied as it is: resumed from the snapshot,
Spark runs it again, as after a crash, and its changelog directory is overwritten.

``rollback`` makes a snapshot the current state: what was current moves to ``rolled_back/``
(the newest one kept, for a manual undo; on S3 each file copied, as S3 renames nothing), then
the snapshot's content is laid in. The next
run continues from it: a ``twinflow run`` stopped early resumes (its manifest says how the
stream ended), a scheduled query stages again what arrived after the snapshot.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from operators_lib.errors import InputError
from operators_lib.io import storage
from operators_lib.io.output import write_json
from operators_lib.io.storage import Place
from operators_lib.ops import history
from operators_lib.state import lifecycle
from operators_lib.state.lease import LEASE
from operators_lib.state.manifest import MANIFEST
from operators_lib.stream.runner import last_commit

SNAPSHOTS = "snapshots"
MANUAL, ROTATION = "manual", "rotation"  # who took a snapshot: pruned apart
ROLLED_BACK = "rolled_back"
_INFO = "snapshot.json"
# What a state directory holds besides its snapshots: what a snapshot takes (staged: linked).
_COPIED = (MANIFEST, lifecycle.RUNS, "checkpoint", "changelog", "result", "late")
# Not state: kept in place by a rollback and by a fresh `twinflow run` (runs/staging.py); the
# run history records what happened (metrics.sqlite: the history of a twinflow before the
# JSON documents, kept, no longer read).
KEPT = {SNAPSHOTS, ROLLED_BACK, lifecycle.LOCK, LEASE, history.HISTORY, "metrics.sqlite"}


def state_dir(path: Place) -> Place:
    """The state directory of ``path``: a ``twinflow run --out`` directory or a state
    directory."""
    for candidate in (path / "_state", path):
        if (candidate / MANIFEST).is_file():
            return candidate
    raise InputError(f"{path}: no query state here (neither a `twinflow run --out` directory "
                     "nor a scheduled query's state directory: no manifest.json)")


def snapshot(state: Place, keep: int | None = None, origin: str = MANUAL) -> dict:
    """Snapshot the state (module docstring), labelled by ``origin`` (who took it: by hand,
    or the checkpoint rotation); with ``keep``, only the newest ``keep`` snapshots of that
    origin remain. Returns the snapshot's description."""
    if keep is not None and keep < 1:
        raise InputError(f"--keep must be at least 1, got {keep}")
    with lifecycle.locked(state):
        batch = last_commit(state / "checkpoint")
        if batch < 0:
            raise InputError(f"{state}: the stream has committed no micro-batch yet: nothing "
                             "to snapshot")
        now = datetime.now(UTC)
        sid = f"{now:%Y%m%dT%H%M%S%fZ}-b{batch:08d}"
        with storage.whole_dir(state / SNAPSHOTS / sid, _INFO) as taken:
            _lay(state, taken)
            info = {"id": sid, "batch_id": batch, "time": now.isoformat(timespec="seconds"),
                    "bytes": history.tree_bytes(taken), "origin": origin}
            write_json(taken / _INFO, info)
        if keep is not None:
            _prune(state, keep, origin)
    return info


def prune(state: Place, keep: int, origin: str) -> list[str]:
    """Keep only the newest ``keep`` snapshots of ``origin`` (the others stay); returns the
    ids removed."""
    if keep < 1:
        raise InputError(f"keep must be at least 1, got {keep}")
    with lifecycle.locked(state):
        return _prune(state, keep, origin)


def _prune(state: Place, keep: int, origin: str) -> list[str]:
    gone = [s["id"] for s in list_snapshots(state)
            if s.get("origin", MANUAL) == origin][:-keep]
    for sid in gone:
        (state / SNAPSHOTS / sid / _INFO).unlink()  # first: no longer a snapshot
        storage.rmtree(state / SNAPSHOTS / sid)
    return gone


def list_snapshots(state: Place) -> list[dict]:
    """The state's snapshots, oldest first."""
    root = state / SNAPSHOTS
    found = [d for d in root.glob(f"*/{_INFO}") if not d.parent.name.startswith(".")]
    return [json.loads(d.read_text()) for d in sorted(found, key=str)]


def find(state: Place, sid: str) -> dict:
    """Snapshot ``sid``'s description; InputError if there is none."""
    info = state / SNAPSHOTS / sid / _INFO
    if not info.is_file():
        known = ", ".join(s["id"] for s in list_snapshots(state)) or "none"
        raise InputError(f"{state}: no snapshot {sid!r} (snapshots: {known})")
    return json.loads(info.read_text())


def restore(state: Place, sid: str, target: Place) -> None:
    """Lay snapshot ``sid``'s content into ``target`` (staged parts linked)."""
    _lay(state / SNAPSHOTS / sid, target)
    (target / _INFO).unlink()


def rollback(state: Place, sid: str) -> dict:
    """Make snapshot ``sid`` the current state (module docstring)."""
    find(state, sid)
    with lifecycle.locked(state):
        undo = state / ROLLED_BACK
        storage.rmtree(undo)
        undo.mkdir(parents=True, exist_ok=True)
        for entry in state.iterdir():
            if entry.name not in KEPT:
                storage.move_tree(entry, undo / entry.name)
        restore(state, sid, state)
    return {"id": sid, "rolled_back_to": sid, "batch_id": last_commit(state / "checkpoint"),
            "previous_state": str(undo)}


def _lay(source: Place, target: Place) -> None:
    """Copy a state's content from ``source`` into ``target`` (staged parts linked)."""
    for name in (*_COPIED, _INFO, "staged"):
        if (source / name).is_file():
            storage.copy(source / name, target / name)
        for path in storage.files(source / name):
            src, dst = source / name / path, target / name / path
            if src.name.startswith("part-"):  # staged, immutable: a new part is a new file
                storage.link_or_copy(src, dst)
            else:
                storage.copy(src, dst)
