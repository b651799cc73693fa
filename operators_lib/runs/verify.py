"""``twinflow state verify``: prove that a snapshot restores.

The snapshot is laid into a scratch directory in the state (``.verify-*``, removed after), and
its stream resumed there by a sweep run (runs/lifecycle.py, ``Steps.SWEEP``), with the query
the snapshot records, from the snapshot's checkpoint over everything the live stream has been
offered since (the staged files, linked: they are immutable). A snapshot of the live state's
last micro-batch has nothing to resume: its run offers a probe instead, a state sweep
(compaction.py) as one micro-batch, which opens every operator's state store (``probe``). The
restored state is then read back operator by operator (state/inspect.py:
``restored_state``), and its result compared with the live state's: the materialized result
of an updating query, every emitted row of an append-only one. The live state is held
meanwhile (lifecycle.locked).

Equal results are the verdict ``equal`` (exit 0), else ``differs`` with a sample (exit 1).
The resumed stream may cut its micro-batches differently from the live one (it reads what
several runs were offered in one), which does not change a deterministic query's result. Where
the result depends on when rows are processed, or the query changed since the snapshot (a
rebuild followed), the comparison is ``not_applicable`` (the resume is proven all the same);
with a state TTL, the rows of keys whose state expired in either stream are left out
(``explained_by_ttl``: the resumed stream runs later, so more keys expire).
"""

from __future__ import annotations

import uuid

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from operators_lib.changelog import ADDS
from operators_lib.io import offers, storage
from operators_lib.io.storage import Place
from operators_lib.parity.compare import TTL_EXPLANATION, compare_frames, not_comparable
from operators_lib.plan import OP, TTL, TTL_KEY, Node, append_only, source_tables
from operators_lib.runs.lifecycle import run
from operators_lib.runs.spec import RunSpec, Steps
from operators_lib.state import lifecycle, result_store, snapshots
from operators_lib.state.inspect import inspect
from operators_lib.state.queries import recorded_plan, recorded_query, sql_texts
from operators_lib.stream.runner import last_commit, source_logs


def verify(spark: SparkSession, state: Place, sid: str) -> dict:
    """Resume snapshot ``sid`` in a scratch directory and compare (module docstring)."""
    with lifecycle.locked(state):
        taken = snapshots.find(state, sid)
        live = last_commit(state / "checkpoint")
        scratch = state / f".verify-{uuid.uuid4().hex[:12]}"
        try:
            snapshots.restore(state, sid, scratch)
            plan = recorded_plan(scratch, spark)  # the query the snapshot's state ran
            tables = source_tables(plan)
            _relocate_sources(scratch / "checkpoint", state / "staged", scratch / "staged")
            for t in tables:
                _offer_as_live(state / "staged" / t, scratch / "staged" / t)
            probe = taken["batch_id"] >= live  # nothing to resume: a micro-batch all the same
            spec = RunSpec.sweep_run(scratch, recorded_query(scratch).rows_per_batch,
                                     live + 1 if probe else None)
            srun = run(spec, spark, Steps.SWEEP, plan=plan).stream
            restored = inspect(spark, scratch)  # every operator's state reads back
            out = {"state": str(state), "snapshot": sid, "snapshot_batch_id": taken["batch_id"],
                   "live_batch_id": live, "resumed_micro_batches": srun.micro_batches,
                   "probe": probe,
                   "restored_state": {o["operator"]: {k: o[k] for k in ("keys", "rows")}
                                      for o in restored["operators"]}}
            if _query(scratch) != _query(state):
                out |= {"verdict": "not_applicable",
                        "reason": "the query (its SQL or TopN split) changed since the "
                                  "snapshot: the snapshot resumed with its own"}
            else:
                out |= _compare(spark, plan, state, scratch)
        finally:
            storage.rmtree(scratch)
    return out


def _query(state: Place) -> tuple:
    query = recorded_query(state)
    return sql_texts(query), query.topn_split


def _relocate_sources(checkpoint: Place, old: Place, new: Place) -> None:
    """Point the checkpoint's record of the files its sources read (``sources/<i>/``) from
    ``old`` to ``new``: on restart Spark plans its last batch again from those paths (local
    ones as ``file:`` URIs, in either of Hadoop's two forms)."""
    forms = [(str(old), str(new))]
    if storage.is_local(old):
        forms = [(old.absolute().as_uri(), new.absolute().as_uri()),
                 (f"file:{old.absolute()}", f"file:{new.absolute()}")]
    for log in source_logs(checkpoint):
        text = log.read_text()
        for a, b in forms:
            text = text.replace(a + "/", b + "/")
        log.write_text(text)
        (log.parent / f".{log.name}.crc").unlink(missing_ok=True)  # Hadoop's, now stale


def _offer_as_live(live: Place, scratch: Place) -> None:
    """Offer in ``scratch`` what the live source has been offered, in its order."""
    files = offers.offered(live)
    for f in files:
        if not (scratch / f.name).exists():
            storage.link_or_copy(f, scratch / f.name)
    parts = [scratch / f.name for f in files if f.name != offers.EOF_FILE]
    if files:
        offers.offer(scratch, parts, eof=len(parts) < len(files))


def _compare(spark: SparkSession, plan: Node, live: Place, scratch: Place) -> dict:
    exempt = not_comparable(plan)
    if exempt:
        return {"verdict": "not_applicable", "reason": exempt}
    types = {f.name: f.type for f in plan.fields}
    columns = [f.name for f in plan.fields]
    results = [_result(spark, plan, s, scratch / f".result-{i}")
               for i, s in enumerate((live, scratch))]
    diff = compare_frames(results[0], results[1], types, columns)
    if diff.equal:
        return {"verdict": "equal", "rows": diff.batch_rows}
    expired = _expired(spark, plan, live, scratch)
    if expired is not None:
        rest = compare_frames(*(r.join(expired, TTL_KEY, "left_anti") for r in results),
                              types, columns)
        if rest.equal:
            return {"verdict": "explained_by_ttl", "rows": diff.batch_rows,
                    "explanation": TTL_EXPLANATION}
    return {"verdict": "differs", "only_in_live": diff.only_batch_count,
            "only_in_restored": diff.only_stream_count,
            "sample_only_in_live": [list(map(str, r)) for r in diff.only_batch],
            "sample_only_in_restored": [list(map(str, r)) for r in diff.only_stream]}


def _result(spark: SparkSession, plan: Node, state: Place, into: Place) -> DataFrame:
    """The state's result: every row an append-only query emitted, an updating one's rows
    (merged into ``into``: the live state's store is not written)."""
    log = result_store.changelog(spark, plan, state)
    if append_only(plan):
        return log.where(F.col(OP).isin(*ADDS))
    return result_store.result_rows(spark, state, last_commit(state / "checkpoint"),
                                    result_store.result_schema(plan, log), into=into)


def _expired(spark: SparkSession, plan: Node, *states: Place) -> DataFrame | None:
    """The TTL keys whose state expired in any of the states' streams (None: none)."""
    logs = [result_store.changelog(spark, plan, s) for s in states]
    if any(TTL_KEY not in log.columns for log in logs):
        return None
    found = logs[0].where(F.col(OP) == TTL).select(TTL_KEY).unionByName(
        logs[1].where(F.col(OP) == TTL).select(TTL_KEY)).distinct()
    return found if found.limit(1).count() else None
