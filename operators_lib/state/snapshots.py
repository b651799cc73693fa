"""Snapshots of a query's state directory (``twinflow state snapshot|list|rollback``).

A state directory (lifecycle.py) is ``DIR/_state`` of a ``twinflow run --out DIR`` or a
scheduled query's ``$TWINFLOW_HOME/state/<query>``; the commands take either ``DIR`` or the
state directory itself. A snapshot is everything a resume needs, taken as one unit while no
run holds the state (``lifecycle.locked``): the manifest, the run records, the checkpoint,
the changelog, the materialized result, the left-out rows, and the staged input with its
offer logs. Staged parts are immutable, so a snapshot links them (a copy where the file
system cannot link); the rest is copied. It is written under ``snapshots/.<id>.tmp`` and
renamed into place once complete: a snapshot that exists is whole.

The snapshot stands at the checkpoint's last committed micro-batch (its ``batch_id``). A
micro-batch Spark had planned but not committed is copied as it is: resumed from the snapshot,
Spark runs it again, as after a crash, and its changelog directory is overwritten.

``rollback`` makes a snapshot the current state: what was current moves to ``rolled_back/``
(the newest one kept, for a manual undo), then the snapshot's content is laid in. The next
run continues from it: a ``twinflow run`` stopped early resumes (its manifest says how the
stream ended), a scheduled query stages again what arrived after the snapshot.
"""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

from operators_lib.errors import InputError
from operators_lib.io.output import write_json
from operators_lib.ops import history
from operators_lib.state import lifecycle
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
KEPT = {SNAPSHOTS, ROLLED_BACK, lifecycle.LOCK, history.HISTORY, "metrics.sqlite"}


def state_dir(path: Path) -> Path:
    """The state directory of ``path``: a ``twinflow run --out`` directory or a state
    directory."""
    for candidate in (path / "_state", path):
        if (candidate / MANIFEST).is_file():
            return candidate
    raise InputError(f"{path}: no query state here (neither a `twinflow run --out` directory "
                     "nor a scheduled query's state directory: no manifest.json)")


def snapshot(state: Path, keep: int | None = None, origin: str = MANUAL) -> dict:
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
        tmp = state / SNAPSHOTS / f".{sid}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        _lay(state, tmp)
        info = {"id": sid, "batch_id": batch, "time": now.isoformat(timespec="seconds"),
                "bytes": history.tree_bytes(tmp), "origin": origin}
        write_json(tmp / _INFO, info)
        os.replace(tmp, state / SNAPSHOTS / sid)
        if keep is not None:
            _prune(state, keep, origin)
    return info


def prune(state: Path, keep: int, origin: str) -> list[str]:
    """Keep only the newest ``keep`` snapshots of ``origin`` (the others stay); returns the
    ids removed."""
    if keep < 1:
        raise InputError(f"keep must be at least 1, got {keep}")
    with lifecycle.locked(state):
        return _prune(state, keep, origin)


def _prune(state: Path, keep: int, origin: str) -> list[str]:
    gone = [s["id"] for s in list_snapshots(state)
            if s.get("origin", MANUAL) == origin][:-keep]
    for sid in gone:
        shutil.rmtree(state / SNAPSHOTS / sid)
    return gone


def list_snapshots(state: Path) -> list[dict]:
    """The state's snapshots, oldest first."""
    root = state / SNAPSHOTS
    found = sorted(d for d in root.glob("*") if (d / _INFO).is_file()) if root.is_dir() else []
    return [json.loads((d / _INFO).read_text()) for d in found]


def find(state: Path, sid: str) -> dict:
    """Snapshot ``sid``'s description; InputError if there is none."""
    info = state / SNAPSHOTS / sid / _INFO
    if not info.is_file():
        known = ", ".join(s["id"] for s in list_snapshots(state)) or "none"
        raise InputError(f"{state}: no snapshot {sid!r} (snapshots: {known})")
    return json.loads(info.read_text())


def restore(state: Path, sid: str, target: Path) -> None:
    """Lay snapshot ``sid``'s content into ``target`` (staged parts linked)."""
    _lay(state / SNAPSHOTS / sid, target)
    (target / _INFO).unlink()


def rollback(state: Path, sid: str) -> dict:
    """Make snapshot ``sid`` the current state (module docstring)."""
    find(state, sid)
    with lifecycle.locked(state):
        undo = state / ROLLED_BACK
        shutil.rmtree(undo, ignore_errors=True)
        undo.mkdir()
        for entry in state.iterdir():
            if entry.name not in KEPT:
                os.replace(entry, undo / entry.name)
        restore(state, sid, state)
    return {"id": sid, "rolled_back_to": sid, "batch_id": last_commit(state / "checkpoint"),
            "previous_state": str(undo)}


def _lay(source: Path, target: Path) -> None:
    """Copy a state's content from ``source`` into ``target`` (staged parts linked)."""
    target.mkdir(parents=True, exist_ok=True)
    for name in (*_COPIED, _INFO):
        src = source / name
        if src.is_dir():
            shutil.copytree(src, target / name)
        elif src.is_file():
            shutil.copy2(src, target / name)
    for src in (source / "staged").rglob("*"):
        dst = target / "staged" / src.relative_to(source / "staged")
        if src.is_dir():
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.name.startswith("part-"):  # immutable: a new part is a new file
            link_or_copy(src, dst)
        else:
            shutil.copy2(src, dst)


def link_or_copy(src: Path, dst: Path) -> None:
    """``dst`` as a hard link to the immutable file ``src``; a copy where the file system
    cannot link (another file system, or one without links)."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)
