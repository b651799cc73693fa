"""A query's run history for operations: ``<state>/metrics.sqlite``, appended by every run.

The state directory is a ``twinflow run --out DIR``'s ``DIR/_state`` or a scheduled query's
``$TWINFLOW_HOME/state/<query>`` (lifecycle.py), so a query's history sits beside its state,
under ``$TWINFLOW_HOME`` for scheduled queries. It is not part of a snapshot and a rollback
keeps it: it records what happened. ``twinflow report`` draws it (ops_report.py).

Tables (counts are per run, as labelled; times UTC ISO 8601):

- ``runs``: one row per run (its key: the data interval of a scheduled run, the start time of
  a ``twinflow run``): its kind, when it ended, new input / rejected / late rows, micro-batches,
  stream seconds, watermark and lag (end - watermark), state rows and bytes after it,
  checkpoint bytes, the parity verdict and the quality gate's outcome (set by those steps).
- ``micro_batches``: one row per micro-batch Spark reported (its last 100 per run): input rows,
  duration, rows/s, watermark, state rows and bytes.
- ``operators``: per micro-batch and stateful operator: state rows (Spark's state entries:
  twinflow's operators keep a page of keys per entry) and bytes (RocksDB's SST files).
- ``tables``: per run and input table: its new rows, its own watermark (its latest event
  time less its delay) and, for a scheduled run, the age of its oldest new input file when
  the run began (how long input waited to be processed).
- ``audits``: each full audit's verdict.
- ``compactions``: each state compaction (compaction.py): the keys it expired and, per
  operator, its keys, state rows and bytes before and after (state_inspect.py).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

HISTORY = "metrics.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
  run TEXT PRIMARY KEY, kind TEXT, ended TEXT, input_rows INTEGER, rejected_rows INTEGER,
  late_rows INTEGER, micro_batches INTEGER, stream_seconds REAL, watermark TEXT, lag_s REAL,
  state_rows INTEGER, state_bytes INTEGER, checkpoint_bytes INTEGER, parity TEXT, gate TEXT);
CREATE TABLE IF NOT EXISTS micro_batches (
  run TEXT, batch_id INTEGER, time TEXT, input_rows INTEGER, duration_ms INTEGER,
  rows_per_s REAL, watermark TEXT, state_rows INTEGER, state_bytes INTEGER,
  PRIMARY KEY (run, batch_id));
CREATE TABLE IF NOT EXISTS operators (
  run TEXT, batch_id INTEGER, operator TEXT, rows INTEGER, bytes INTEGER,
  PRIMARY KEY (run, batch_id, operator));
CREATE TABLE IF NOT EXISTS audits (time TEXT PRIMARY KEY, interval TEXT, verdict TEXT);
CREATE TABLE IF NOT EXISTS tables (
  run TEXT, "table" TEXT, input_rows INTEGER, watermark TEXT, oldest_input_age_s REAL,
  PRIMARY KEY (run, "table"));
CREATE TABLE IF NOT EXISTS compactions (
  time TEXT, batch_id INTEGER, operator_id INTEGER, operator TEXT, expired_keys INTEGER,
  keys_before INTEGER, keys_after INTEGER, rows_before INTEGER, rows_after INTEGER,
  bytes_before INTEGER, bytes_after INTEGER, PRIMARY KEY (time, operator_id, operator));
"""


@contextmanager
def _db(state: Path) -> Iterator[sqlite3.Connection]:
    state.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(state / HISTORY, timeout=30)) as con:
        con.executescript(_SCHEMA)
        with con:  # one transaction
            yield con


def _operators(progress: dict) -> list[tuple[str, int, int]]:
    """(operator, state rows, state bytes) of one micro-batch's progress."""
    return [(f"{i}:{op.get('operatorName', '?')}", op.get("numRowsTotal", 0),
             op.get("customMetrics", {}).get("rocksdbSstFileSize", op.get("memoryUsedBytes", 0)))
            for i, op in enumerate(progress.get("stateOperators") or [])]


def record_run(state: Path, run: str, kind: str, progress: list[dict], input_rows: int,
               rejected_rows: int, late_rows: int, stream_seconds: float,
               tables: list[tuple[str, int, int | None, float | None]] = ()) -> None:
    """A run's stream step: the run's row, its micro-batches' and, per input table, its
    (name, new rows, watermark in epoch ms, age of the oldest new input in seconds)."""
    ended = datetime.now(UTC)
    last = progress[-1] if progress else {}
    watermark = _watermark(last)
    ops = _operators(last)
    with _db(state) as con:
        for table in ("micro_batches", "operators", "tables"):
            con.execute(f"DELETE FROM {table} WHERE run = ?", (run,))  # noqa: S608 (fixed)
        con.executemany("INSERT INTO tables VALUES (?, ?, ?, ?, ?)", [
            (run, name, rows, None if wm is None else
             datetime.fromtimestamp(wm / 1000, UTC).isoformat(), age)
            for name, rows, wm, age in tables])
        con.execute(
            "INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
            "(SELECT parity FROM runs WHERE run = ?), (SELECT gate FROM runs WHERE run = ?))",
            (run, kind, ended.isoformat(timespec="seconds"), input_rows, rejected_rows,
             late_rows, len({p["batchId"] for p in progress}), round(stream_seconds, 3),
             watermark, _lag(ended, watermark), sum(r for _, r, _ in ops),
             sum(b for _, _, b in ops),
             tree_bytes(state / "checkpoint"), run, run))
        for p in progress:
            p_ops = _operators(p)
            mark = _watermark(p)
            con.execute("INSERT OR REPLACE INTO micro_batches VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (run, p["batchId"], p.get("timestamp"), p.get("numInputRows", 0),
                         (p.get("durationMs") or {}).get("triggerExecution"),
                         p.get("processedRowsPerSecond"), mark,
                         sum(r for _, r, _ in p_ops), sum(b for _, _, b in p_ops)))
            con.executemany("INSERT OR REPLACE INTO operators VALUES (?, ?, ?, ?, ?)",
                            [(run, p["batchId"], *o) for o in p_ops])


def record_outcome(state: Path, run: str, *, parity: str | None = None,
                   gate: str | None = None) -> None:
    """A run's parity verdict or quality-gate outcome (a run without a stream row gets one)."""
    with _db(state) as con:
        con.execute("INSERT OR IGNORE INTO runs (run) VALUES (?)", (run,))
        if parity is not None:
            con.execute("UPDATE runs SET parity = ? WHERE run = ?", (parity, run))
        if gate is not None:
            con.execute("UPDATE runs SET gate = ? WHERE run = ?", (gate, run))


def record_audit(state: Path, interval: str, verdict: str) -> None:
    with _db(state) as con:
        con.execute("INSERT OR REPLACE INTO audits VALUES (?, ?, ?)",
                    (datetime.now(UTC).isoformat(timespec="seconds"), interval, verdict))


def record_compaction(state: Path, batch_id: int, expired_keys: int,
                      operators: list[dict]) -> None:
    """A compaction: per operator its keys, rows and bytes before and after (compaction.py's
    ``operators``)."""
    time = datetime.now(UTC).isoformat(timespec="seconds")
    rows = [(time, batch_id, o["id"], o["operator"], expired_keys,
             *[o[f"{k}_{when}"] for k in ("keys", "rows", "bytes") for when in ("before", "after")])
            for o in operators]
    with _db(state) as con:
        con.executemany("INSERT OR REPLACE INTO compactions VALUES "
                        "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)


def history(state: Path) -> dict[str, pd.DataFrame]:
    """Every table of the history (empty frames where nothing was recorded)."""
    with _db(state) as con:
        return {t: pd.read_sql_query(f"SELECT * FROM {t}", con)  # noqa: S608 (fixed names)
                for t in ("runs", "micro_batches", "operators", "tables", "audits",
                          "compactions")}


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
