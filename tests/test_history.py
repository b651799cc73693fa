"""The run history (operators_lib/ops/history.py) without Spark: one document per record, a
retry rewrites its own, outcomes never touch the run's document; and what the ops steps make
of it (jobs/ops_reports.py: the gauges, the query of a DAG the plugin shows the report of)."""

from __future__ import annotations

import pytest

from jobs.ops_reports import query_of, run_gauges
from operators_lib.ops import history


def _progress(batch: int, rows: int) -> dict:
    return {"batchId": batch, "timestamp": f"2024-07-01T00:00:{batch:02d}.000Z",
            "numInputRows": rows, "durationMs": {"triggerExecution": 10},
            "processedRowsPerSecond": 5.0, "eventTime": {"watermark": "2024-07-01T00:00:00Z"},
            "stateOperators": [{"operatorName": "join", "numRowsTotal": 7,
                                "customMetrics": {"rocksdbSstFileSize": 100}}]}


def test_history_is_one_document_per_record(tmp_path):
    state = tmp_path / "state"
    empty = history.history(state)
    assert all(frame.empty and list(frame.columns) == history.COLUMNS[name]
               for name, frame in empty.items())
    history.record_outcome(state, "20240701T000000", parity="equal")  # before its stream row
    history.record_run(state, "20240701T000000", "scheduled", [_progress(0, 3)], 3, 0, 0, 1.5)
    # A retry of the same run rewrites its document: one row, the retry's numbers.
    history.record_run(state, "20240701T000000", "scheduled",
                       [_progress(b, 1) for b in range(150)], 150, 1, 2, 2.0,
                       [("t", 150, 1719792000000, 30.0)])
    history.record_outcome(state, "20240701T000000", gate="passed")
    history.record_outcome(state, "20240701T010000", gate="failed")  # no stream step
    history.record_compaction(state, 4, 2, [
        {"id": 0, "operator": "join", "keys_before": 2, "keys_after": 0, "rows_before": 9,
         "rows_after": 1, "bytes_before": 50, "bytes_after": 10}])
    history.record_audit(state, "20240701T000000", "equal")

    h = history.history(state)
    runs = h["runs"].set_index("run")
    assert runs.loc["20240701T000000", ["input_rows", "late_rows", "micro_batches",
                                        "state_rows", "parity", "gate"]].tolist() == [
        150, 2, 150, 7, "equal", "passed"]
    assert runs.loc["20240701T010000", "gate"] == "failed"
    assert len(h["micro_batches"]) == 100  # a run's last 100 micro-batches
    assert h["micro_batches"]["batch_id"].min() == 50
    assert h["tables"][["table", "input_rows"]].values.tolist() == [["t", 150]]
    assert h["compactions"][["expired_keys", "keys_before", "keys_after"]].values.tolist() == [
        [2, 2, 0]]
    assert h["audits"]["verdict"].tolist() == ["equal"]
    files = sorted(p.relative_to(state / history.HISTORY).as_posix()
                   for p in (state / history.HISTORY).rglob("*") if p.is_file())
    assert [f for f in files if not f.startswith(("audits/", "compactions/"))] == [
        "outcomes/20240701T000000.gate.json", "outcomes/20240701T000000.parity.json",
        "outcomes/20240701T010000.gate.json", "runs/20240701T000000.json"]

    record = history.run_record(state, "20240701T000000")
    assert (record["parity"], record["gate"]) == ("equal", "passed")
    assert history.run_record(state, "20240701T010000") is None
    gauges = run_gauges("q", record)
    assert gauges["twinflow.q.input_rows"] == 150.0
    assert gauges["twinflow.q.state_bytes"] == 100.0
    assert "twinflow.q.lag_s" in gauges and len(gauges) == 9
    # A document that cannot be read (a disk that filled up) hides nothing else.
    (state / history.HISTORY / "runs" / "bad.json").write_text('{"run": "bad", "ki')
    with pytest.warns(UserWarning, match="bad.json skipped"):
        assert list(history.history(state)["runs"]["run"]) == list(h["runs"]["run"])


def test_the_plugin_finds_the_query_of_a_dag():
    """Only a query's own DAGs show its report (Airflow checks access to the DAG asked for)."""
    queries = {"shop", "revenue", "x"}
    assert [query_of(d, queries) for d in (
        "twinflow_shop", "twinflow_checkpoints_shop", "twinflow_audit_x", "twinflow_audit_shop",
        "twinflow_shop_revenue", "twinflow_other", "another_dag")] == [
        "shop", "shop", "x", "shop", None, None, None]
