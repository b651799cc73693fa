"""A query's run history for operations: ``<state>/history/``, one JSON document per record.

The state directory is a ``twinflow run --out DIR``'s ``DIR/_state`` or a scheduled query's
``$TWINFLOW_HOME/state/<query>`` (lifecycle.py), so a query's history sits beside its state.
It is not part of a snapshot and a rollback keeps it: it records what happened. The ops
report (report.py) draws it; the query DAG's ``report`` task exports a run's numbers as
Airflow metrics (jobs/ops_reports.py).

Each record is a file of its own, written whole and never appended to or updated in place, so
the history works where the state may live (an object store has no append, and SQLite's locks
are unsafe on NFS), and two writers never write the same file. A retried run rewrites its own
documents; a document that cannot be read is skipped with a warning (one bad file does not
hide the rest). Layout (times UTC ISO 8601):

- ``runs/<run>.json``: a run (its key: the data interval of a scheduled run, the start time of
  a ``twinflow run``): its kind, when it ended, new input / rejected / late rows,
  micro-batches, stream seconds, watermark and lag (end - watermark), state rows and bytes
  after it, checkpoint bytes; and its lists ``batches`` (per micro-batch Spark reported,
  the last 100: input rows, duration, rows/s, watermark, state rows and bytes),
  ``operators`` (per micro-batch and stateful operator: state rows, i.e. Spark's state
  entries, twinflow's operators keep a page of keys per entry, and bytes, RocksDB's SST files)
  and ``tables`` (per input table: its new rows, its own watermark, its latest event time less
  its delay, and for a scheduled run the age of its oldest new input file when the run began).
- ``outcomes/<run>.parity.json``, ``outcomes/<run>.gate.json``: the run's parity verdict and
  quality-gate outcome, set by those steps.
- ``audits/<time>.json``: a full audit's verdict (``<time>`` without its ``:``, which HDFS
  refuses in a name).
- ``compactions/<time>.json``: a state compaction (compaction.py): the keys it expired and,
  per operator, its keys, state rows and bytes before and after (state/inspect.py).

``history`` reads them back as one table each (the columns below).
"""

from __future__ import annotations

import json
import warnings
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from operators_lib.io.output import write_text

HISTORY = "history"

COLUMNS = {
    "runs": ["run", "kind", "ended", "input_rows", "rejected_rows", "late_rows",
             "micro_batches", "stream_seconds", "watermark", "lag_s", "state_rows",
             "state_bytes", "checkpoint_bytes", "parity", "gate"],
    "micro_batches": ["run", "batch_id", "time", "input_rows", "duration_ms", "rows_per_s",
                      "watermark", "state_rows", "state_bytes"],
    "operators": ["run", "batch_id", "operator", "rows", "bytes"],
    "tables": ["run", "table", "input_rows", "watermark", "oldest_input_age_s"],
    "audits": ["time", "interval", "verdict"],
    "compactions": ["time", "batch_id", "operator_id", "operator", "expired_keys",
                    "keys_before", "keys_after", "rows_before", "rows_after", "bytes_before",
                    "bytes_after"],
}
_OUTCOMES = ("parity", "gate")
_KEPT_BATCHES = 100


def _write(path: Path, doc: Any) -> None:
    """``doc`` as ``path``, whole or not at all (a reader never sees half a document)."""
    write_text(path, json.dumps(doc, default=str))


def _read(path: Path) -> Any:
    """A document, or None (with a warning) if it cannot be read."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as e:
        warnings.warn(f"run history: {path} skipped: {e}", stacklevel=2)
        return None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _file_name(time: str) -> str:
    """A record's file named for its time, without the ``:`` that HDFS refuses in a name."""
    return f"{time.replace(':', '')}.json"


def _operators(progress: dict) -> list[tuple[str, int, int]]:
    """(operator, state rows, state bytes) of one micro-batch's progress."""
    return [(f"{i}:{op.get('operatorName', '?')}", op.get("numRowsTotal", 0),
             op.get("customMetrics", {}).get("rocksdbSstFileSize", op.get("memoryUsedBytes", 0)))
            for i, op in enumerate(progress.get("stateOperators") or [])]


def record_run(state: Path, run: str, kind: str, progress: list[dict], input_rows: int,
               rejected_rows: int, late_rows: int, stream_seconds: float,
               tables: list[tuple[str, int, int | None, float | None]] = ()) -> None:
    """A run's stream step: the run's document with its micro-batches and, per input table,
    its (name, new rows, watermark in epoch ms, age of the oldest new input in seconds)."""
    ended = datetime.now(UTC)
    last = progress[-1] if progress else {}
    watermark = _watermark(last)
    ops = _operators(last)
    kept = progress[-_KEPT_BATCHES:]
    _write(state / HISTORY / "runs" / f"{run}.json", {
        "run": run, "kind": kind, "ended": ended.isoformat(timespec="seconds"),
        "input_rows": input_rows, "rejected_rows": rejected_rows, "late_rows": late_rows,
        "micro_batches": len({p["batchId"] for p in progress}),
        "stream_seconds": round(stream_seconds, 3), "watermark": watermark,
        "lag_s": _lag(ended, watermark), "state_rows": sum(r for _, r, _ in ops),
        "state_bytes": sum(b for _, _, b in ops),
        "checkpoint_bytes": tree_bytes(state / "checkpoint"),
        "batches": [
            {"batch_id": p["batchId"], "time": p.get("timestamp"),
             "input_rows": p.get("numInputRows", 0),
             "duration_ms": (p.get("durationMs") or {}).get("triggerExecution"),
             "rows_per_s": p.get("processedRowsPerSecond"), "watermark": _watermark(p),
             "state_rows": sum(r for _, r, _ in _operators(p)),
             "state_bytes": sum(b for _, _, b in _operators(p))} for p in kept],
        "operators": [{"batch_id": p["batchId"], "operator": o, "rows": r, "bytes": b}
                      for p in kept for o, r, b in _operators(p)],
        "tables": [{"table": name, "input_rows": rows,
                    "watermark": None if wm is None else
                    datetime.fromtimestamp(wm / 1000, UTC).isoformat(),
                    "oldest_input_age_s": age} for name, rows, wm, age in tables]})


def record_outcome(state: Path, run: str, *, parity: str | None = None,
                   gate: str | None = None) -> None:
    """A run's parity verdict or quality-gate outcome."""
    for what, value in (("parity", parity), ("gate", gate)):
        if value is not None:
            _write(state / HISTORY / "outcomes" / f"{run}.{what}.json",
                   {"run": run, what: value, "time": _now()})


def record_audit(state: Path, interval: str, verdict: str) -> None:
    time = _now()
    _write(state / HISTORY / "audits" / _file_name(time),
           {"time": time, "interval": interval, "verdict": verdict})


def record_compaction(state: Path, batch_id: int, expired_keys: int,
                      operators: list[dict]) -> None:
    """A compaction: per operator its keys, rows and bytes before and after (compaction.py's
    ``operators``)."""
    time = datetime.now(UTC).isoformat(timespec="microseconds")
    _write(state / HISTORY / "compactions" / _file_name(time), [
        {"time": time, "batch_id": batch_id, "operator_id": o["id"],
         "operator": o["operator"], "expired_keys": expired_keys,
         **{f"{k}_{when}": o[f"{k}_{when}"] for k in ("keys", "rows", "bytes")
            for when in ("before", "after")}}
        for o in operators])


def run_record(state: Path, run: str) -> dict | None:
    """One run's document with its outcomes (None if the run never recorded a stream step)."""
    path = state / HISTORY / "runs" / f"{run}.json"
    if not path.is_file():
        return None
    doc = json.loads(path.read_text())
    for what in _OUTCOMES:
        outcome = state / HISTORY / "outcomes" / f"{run}.{what}.json"
        doc[what] = json.loads(outcome.read_text())[what] if outcome.is_file() else None
    return doc


def history(state: Path) -> dict[str, pd.DataFrame]:
    """Every table of the history, in time order (empty frames where nothing was recorded).
    A run with an outcome but no stream step (a failed stream) is a row of its own."""
    root = state / HISTORY
    docs = [d for p in sorted((root / "runs").glob("*.json")) if (d := _read(p))]
    rows: dict[str, list[dict]] = {t: [] for t in COLUMNS}
    runs = {d["run"]: d for d in sorted(docs, key=lambda d: d["ended"])}
    for p in sorted((root / "outcomes").glob("*.json")):
        if not (outcome := _read(p)):
            continue
        run = runs.setdefault(outcome["run"], {"run": outcome["run"]})
        run.update({k: v for k, v in outcome.items() if k in _OUTCOMES})
    for doc in runs.values():
        rows["runs"].append(doc)
        rows["micro_batches"] += [{"run": doc["run"], **b} for b in doc.get("batches", [])]
        rows["operators"] += [{"run": doc["run"], **o} for o in doc.get("operators", [])]
        rows["tables"] += [{"run": doc["run"], **t} for t in doc.get("tables", [])]
    for table in ("audits", "compactions"):
        for p in sorted((root / table).glob("*.json")):
            doc = _read(p) or []
            rows[table] += doc if isinstance(doc, list) else [doc]
    return {t: pd.DataFrame(rows[t], columns=cols) for t, cols in COLUMNS.items()}


def tree_bytes(root: Path) -> int:
    """The bytes of the files under ``root`` (0 if it does not exist)."""
    return sum(f.stat().st_size for f in root.rglob("*") if f.is_file())


def _watermark(progress: dict) -> str | None:
    """A progress's watermark as ISO text (Spark gives text; the operator harness, tests/,
    epoch milliseconds)."""
    mark = (progress.get("eventTime") or {}).get("watermark")
    if isinstance(mark, int):
        try:
            return datetime.fromtimestamp(mark / 1000, UTC).isoformat(timespec="milliseconds")
        except (ValueError, OverflowError):  # past the end of input: beyond any date
            return None
    return mark


def _lag(ended: datetime, watermark: str | None) -> float | None:
    """Seconds from the watermark to the run's end; None without one, or past the end of
    input (the marker's watermark is far beyond any date)."""
    try:
        mark = datetime.fromisoformat(watermark.replace("Z", "+00:00")) if watermark else None
    except ValueError:
        return None
    return None if mark is None else round((ended - mark).total_seconds(), 3)
