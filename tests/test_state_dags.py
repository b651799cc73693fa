"""The state lifecycle DAGs with ``dag.test()``, real spark-submit jobs, on one query's state
(the shop's LEFT JOIN + GROUP BY, with a state TTL) after one run: checkpoint rotation, a
backfill, TTL compaction, a rollback."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

from jobs.gates import publish
from operators_lib.ops import metrics
from operators_lib.runs.query_config import QueryConfig
from operators_lib.state import lifecycle, snapshots
from operators_lib.stream.runner import last_commit
from tests.cluster import INTERPRETED
from tests.scheduled import batch_parity, stream_increment
from tests.test_dags import _latest, _task_states

REPO = Path(__file__).resolve().parents[1]
SHOP = REPO / "examples" / "shop"


def _config(tmp: Path) -> Path:
    (tmp / "ttl.sql").write_text("SET 'table.exec.state.ttl' = '1 h';\n")
    cfg = json.loads((REPO / "dags" / "queries" / "revenue_by_region.json").read_text())
    cfg.update(name="q_rev", sql=[str(SHOP / "shop.sql"), str(tmp / "ttl.sql"),
                                  str(SHOP / "revenue_by_region.sql")],
               inputs={t: str(tmp / "incoming" / t) for t in ("customers", "orders")},
               rows_per_batch=100, retries=0, spark_conf=INTERPRETED,
               checkpoints={"keep": 1})
    for t in cfg["inputs"]:
        (tmp / "incoming" / t).mkdir(parents=True)
    path = tmp / "queries" / "q_rev.json"
    path.parent.mkdir()
    path.write_text(json.dumps(cfg))
    return path


def _arrive(tmp: Path, hour: int) -> None:
    for t in ("customers", "orders"):
        src = SHOP / "incoming" / t / f"2024-01-01T{hour}.csv"
        if src.exists():
            shutil.copy(src, tmp / "incoming" / t)


def _at(hour: int, minute: int = 0) -> datetime:
    return datetime(2024, 1, 1, hour, minute, tzinfo=UTC)


def test_checkpoint_rotation_backfill_compaction_and_rollback(spark, airflow_env, tmp_path):
    from dags.twinflow_backfill import build_backfill_dag
    from dags.twinflow_state import (
        build_checkpoints_dag,
        build_compact_dag,
        build_rollback_dag,
    )

    config = _config(tmp_path)
    # dag.test() syncs the DAGs folder to the metadata DB: let it see this test's config.
    airflow_env.setenv("TWINFLOW_QUERIES", str(config.parent))
    home = Path(airflow_env["TWINFLOW_HOME"])
    state = home / "state" / "q_rev"
    _arrive(tmp_path, 10)
    # The 10h run's steps in this process (the query DAG itself: tests/test_dags.py).
    cfg = QueryConfig.load(config)
    run_dir = home / "runs" / "q_rev" / "20240101T100000"
    stream_increment(cfg, spark, state, run_dir)
    assert batch_parity(cfg, spark, state, run_dir)["verdict"] == "equal"
    publish(cfg, run_dir, run_dir.name)

    snapshots.snapshot(state, origin=snapshots.ROTATION)  # as an earlier rotation's
    by_hand = snapshots.snapshot(state)["id"]
    # Rotation: a snapshot, verified by resuming it in a scratch directory; the rotation keeps
    # its newest one (the earlier one is pruned) and never the ones taken by hand.
    run = build_checkpoints_dag(config).test(logical_date=_at(10, 30))
    assert run.state == "success", _task_states(run)
    (checked,) = (home / "runs" / "checkpoints_q_rev").glob("*/verify.json")
    verified = json.loads(checked.read_text())
    assert (verified["verdict"], verified["rows"]) == ("equal", 3)  # the regions
    assert verified["probe"]  # at the live head: a probe micro-batch opened the state
    by_hand_too, kept = [s["id"] for s in snapshots.list_snapshots(state)]
    assert (by_hand_too, kept) == (by_hand, verified["snapshot"])
    at_snapshot = last_commit(state / "checkpoint")
    scheduled = (_latest(home, "q_rev") / "stream.csv").read_text()

    # Backfill the interval in batch mode: gated and published as the run was.
    shutil.rmtree(_latest(home, "q_rev"))  # lost, say
    run = build_backfill_dag(config).test(logical_date=_at(12), run_conf={
        "start": "20240101T100000", "end": "20240101T100000"})
    assert run.state == "success", _task_states(run)
    latest = _latest(home, "q_rev")
    assert latest.name == "20240101T100000"
    assert json.loads((latest / "parity.json").read_text())["verdict"] == "batch_backfill"
    assert sorted((latest / "stream.csv").read_text().splitlines()) == \
        sorted(scheduled.splitlines())  # an updating query: its whole result then

    # Compaction: a sweep micro-batch through the join and the aggregate (nothing is idle
    # for an hour here), then the audit proves the result unchanged.
    run = build_compact_dag(config).test(logical_date=_at(12, 30))
    assert run.state == "success", _task_states(run)
    (compacted,) = (home / "runs" / "compact_q_rev").glob("*/compact.json")
    done = json.loads(compacted.read_text())
    assert (done["compacted"], done["expired_keys"], done["not_swept"]) == (True, 0, [])
    assert done["after"]["keys"] == done["before"]["keys"] > 0
    assert len(metrics.history(state)["compactions"]) == 2  # one row per operator
    (logged,) = [json.loads(line) for line in
                 (home / "audit" / "q_rev.jsonl").read_text().splitlines()]
    assert (logged["action"], logged["before"]) == ("compact", done["before"])

    # Rollback to the verified snapshot: the state is as it was before the sweep.
    assert last_commit(state / "checkpoint") == at_snapshot + 1
    run = build_rollback_dag(config).test(logical_date=_at(13), run_conf={"snapshot": kept})
    assert run.state == "success", _task_states(run)
    assert last_commit(state / "checkpoint") == at_snapshot
    assert lifecycle.run_keys(state) == ["20240101T100000"]

