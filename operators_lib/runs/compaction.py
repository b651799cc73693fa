"""``twinflow state compact``: drop now the state that the query's TTL has expired.

The state TTL (``SET 'table.exec.state.ttl'``) is applied when a key is touched (stream/join.py,
stream/group_agg.py): the state of a key that is never touched again would stay forever. A
compaction sweeps it: a sweep run (runs/lifecycle.py, ``Steps.SWEEP``) stages one sweep file
per table, a row per bucket (plan.SWEEP_FIRST), and runs the stream over them from its
checkpoint as one more micro-batch. Each join and GROUP BY then drops, in every bucket, the
keys idle longer than the TTL and emits their ``TTL`` markers, as if each were touched (so
parity knows them: stream/rows.py). RocksDB compacts its files on that micro-batch's commit;
the checkpoint keeps the versions Spark retains (``spark.sql.streaming.minBatchesToRetain``)
until they age out, so its size on disk falls only then. The sweep carries no data and moves
no watermark: the changelog gains TTL markers only, the result is unchanged (checked:
``result_rows_changed`` counts what else the sweep's micro-batch emitted). A query with
processing-time windows is refused (its watermark is the clock: the micro-batch would fire
windows).

A sweep needs the stream to have read everything offered to it (it would otherwise wait behind
that input) and committed every micro-batch it planned: otherwise it is refused (exit 2). The
next run continues after the sweep's micro-batch as after any other; its outputs take in the
TTL markers. A query that sets no TTL, or has committed nothing yet, is left as it is
(``compacted: false`` and the reason).

Sweep rows travel through filters, projections, unions and the changelog operators; an
operator with state TTL above one they do not pass (OVER, a window, an interval join) is not
swept, and the result says so (``not_swept``).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import unquote, urlparse

from pyspark.sql import SparkSession

from operators_lib.engine.spark import session_conf
from operators_lib.errors import InputError
from operators_lib.io import offers
from operators_lib.ops import history
from operators_lib.plan import (
    MARKERS,
    OP,
    TTL,
    TTL_UPSTREAM,
    Aggregate,
    Filter,
    Join,
    Node,
    Project,
    Rank,
    Scan,
    Union,
    children,
    find,
    first_row_dedup,
    processing_time_windows,
    source_tables,
)
from operators_lib.runs.lifecycle import run
from operators_lib.runs.spec import RunSpec, Steps
from operators_lib.state import lifecycle
from operators_lib.state.inspect import inspect
from operators_lib.state.queries import recorded_plan, recorded_query
from operators_lib.stream.runner import (
    changelog_frame,
    last_commit,
    last_planned,
    source_logs,
)

_COMPACT_ON_COMMIT = "spark.sql.streaming.stateStore.rocksdb.compactOnCommit"


def compact(spark: SparkSession, state: Path) -> dict:
    """Sweep the state (module docstring); returns what it did, per operator before and
    after."""
    with lifecycle.locked(state):
        plan = recorded_plan(state, spark)
        ttl = _ttl_operators(plan)
        last = last_commit(state / "checkpoint")
        skip = ("the query sets no state TTL (SET 'table.exec.state.ttl'): its state expires "
                "only when its rows do") if not ttl else (
            "the stream has committed no micro-batch yet") if last < 0 else None
        if skip:
            return {"state": str(state), "compacted": False, "reason": skip}
        if processing_time_windows(plan):
            raise InputError("the query has a processing-time window: a sweep's micro-batch "
                             "would fire the windows processing time has passed; its state "
                             "is compacted by its runs")
        tables = source_tables(plan)
        _check_all_read(state, [k for k, t in tables.items() if not t.constant], last)
        before = inspect(spark, state)
        spec = RunSpec.sweep_run(state, recorded_query(state).rows_per_batch, last + 1)
        with session_conf(spark, {_COMPACT_ON_COMMIT: "true"}):
            srun = run(spec, spark, Steps.SWEEP, plan=plan).stream
        swept = last_commit(state / "checkpoint")
        counts = _kinds(spark, state, last + 1, swept)
        after = inspect(spark, state)
        # A key expired in the last changelog operator is a TTL marker, one further up a
        # TTL_UPSTREAM marker (stream/rows.marker_output).
        expired = counts.pop(TTL, 0) + counts.pop(TTL_UPSTREAM, 0)
        changed = sum(n for kind, n in counts.items() if kind not in MARKERS)
        history.record_run(state, f"compact-{datetime.now(UTC):%Y%m%dT%H%M%S.%f}", "compact",
                           srun.progress, 0, 0, 0, srun.seconds)
        operators = _per_operator(before, after)
        history.record_compaction(state, swept, expired, operators)
    reached = [n for n in ttl if _reached(n)]
    return {"state": str(state), "compacted": True, "micro_batch": swept,
            "expired_keys": expired, "result_rows_changed": changed,
            "ttl_ms": reached[0].ttl_ms if reached else ttl[0].ttl_ms,
            "not_swept": [_name(n) for n in ttl if n not in reached],
            "before": _totals(before), "after": _totals(after),
            "operators": operators, "seconds": round(srun.seconds, 3)}


def _ttl_operators(plan: Node) -> list[Node]:
    """The operators that apply the state TTL."""
    return [n for n in find(plan, Join) + find(plan, Aggregate)
            if n.ttl_ms and _changelog_operator(n)]


def _changelog_operator(node: Node) -> bool:
    """Is ``node`` run by a changelog processor (stream/rows.py), which sweeps and passes a
    sweep on? Mirrors stream/planner.py's choice."""
    if isinstance(node, Aggregate):
        return True
    if isinstance(node, Join):
        return bool(node.ttl_ms) and not (node.interval or node.temporal or node.windowed)
    if isinstance(node, Rank):
        return not node.windowed and not first_row_dedup(node)
    return False


def _reached(node: Node) -> bool:
    """Do sweep rows reach ``node``'s input (from any of its tables)?"""
    return any(_passes(c) for c in children(node))


def _passes(node: Node) -> bool:
    if isinstance(node, Scan):
        return True
    if isinstance(node, (Filter, Project, Union)) or _changelog_operator(node):
        return _reached(node)
    return False


def _name(node: Node) -> str:
    if isinstance(node, Join):
        return f"{node.kind} JOIN ON {', '.join(node.left_keys)}"
    return f"GROUP BY {', '.join(node.group_by) or '()'}"


def _check_all_read(state: Path, tables: list[str], last: int) -> None:
    """Refuse while the stream has input offered but not read, or a micro-batch planned but
    not committed (module docstring). An earlier sweep not read yet is no input: this one
    follows it."""
    planned = last_planned(state / "checkpoint")
    if planned > last:
        raise InputError(f"{state}: the stream planned micro-batch {planned} and has not "
                         "committed it: run or resume the query first, then compact")
    read = set()  # (table, file) of what the sources' logs in the checkpoint say was read
    for log in source_logs(state / "checkpoint"):
        for line in log.read_text().splitlines()[1:]:
            if line.startswith("{"):
                path = Path(unquote(urlparse(json.loads(line)["path"]).path))
                read.add((path.parent.name, path.name))
    pending = [f"{t}/{f.name}" for t in tables for f in offers.offered(state / "staged" / t)
               if (t, f.name) not in read and not f.name.startswith(offers.SWEEP_PREFIX)]
    if pending:
        raise InputError(f"{state}: the stream has input it has not read yet ("
                         f"{', '.join(pending[:3])}{' ...' if len(pending) > 3 else ''}): run "
                         "or resume the query first, then compact")


def _kinds(spark: SparkSession, state: Path, first: int, upto: int) -> dict[str, int]:
    """Rows per kind (OP) that micro-batches ``first`` .. ``upto`` emitted."""
    log = changelog_frame(spark, state / "changelog", state / "checkpoint", first, upto)
    if log is None:
        return {}
    return {r[OP]: r["count"] for r in log.groupBy(OP).count().collect()}


def _totals(inspected: dict) -> dict:
    ops = inspected["operators"]
    return {k: sum(o[k] or 0 for o in ops) for k in ("keys", "rows", "bytes")}


def _per_operator(before: dict, after: dict) -> list[dict]:
    later = {(o["id"], o["operator"]): o for o in after["operators"]}
    return [{"operator": o["operator"], "id": o["id"],
             **{f"{k}_before": o[k] for k in ("keys", "rows", "bytes")},
             **{f"{k}_after": later.get((o["id"], o["operator"]), {}).get(k)
                for k in ("keys", "rows", "bytes")}} for o in before["operators"]]
