"""``twinflow state compact`` (operators_lib/runs/compaction.py) on a ``twinflow run`` directory,
with Structured Streaming: state idle longer than the TTL is dropped at once (without it,
state of a key never touched again stays forever), the result is unchanged, and the run that
continues explains the difference from batch by the expired keys."""

from __future__ import annotations

import json
import time

from jobs.cli import main
from operators_lib.ops import history
from operators_lib.state import lifecycle

TTL_S = 3
DDL = "CREATE TABLE orders (order_id INT, cust_id STRING);\n"
QUERY = (f"SET 'table.exec.state.ttl' = '{TTL_S} s';\n"
         "SELECT cust_id, COUNT(*) AS n FROM orders GROUP BY cust_id\n")
ORDERS = "order_id,cust_id\n1,c3\n2,c1\n3,c2\n4,c1\n"


def _args(tmp, *extra: str) -> list[str]:
    (tmp / "ddl.sql").write_text(DDL)
    (tmp / "q.sql").write_text(QUERY)
    (tmp / "orders.csv").write_text(ORDERS)
    return ["run", "--sql", str(tmp / "ddl.sql"), "--sql", str(tmp / "q.sql"),
            "--data", f"orders={tmp / 'orders.csv'}", "--out", str(tmp / "out"),
            "--mode", "both", "--rows-per-batch", "1", *extra]


def _state(capsys, *args: str) -> tuple[int, dict | None, str]:
    code = main(["state", *args])
    out, err = capsys.readouterr()
    return code, json.loads(out) if code == 0 else None, err


def test_compact_drops_expired_state_and_keeps_the_result(spark, tmp_path, capsys):
    assert main(_args(tmp_path, "--stop-after-batches", "2")) == 0, capsys.readouterr().err
    capsys.readouterr()
    out = str(tmp_path / "out")
    state = tmp_path / "out" / "_state"
    changelog = (tmp_path / "out" / "changelog.csv").read_text()

    # (What is written within the TTL stays: tests/test_state_sweep.py, test_state_dags.py.)
    time.sleep(TTL_S + 1)  # groups c3 and c1 are now idle for longer than the TTL
    code, done, err = _state(capsys, "compact", "--out", out)
    assert code == 0, err
    assert (done["expired_keys"], done["result_rows_changed"], done["not_swept"]) == (2, 0, [])
    assert done["before"]["keys"] == 2 and done["after"] == {"keys": 0, "rows": 0, "bytes": 0}
    assert done["micro_batch"] == 2  # the sweep: one micro-batch after the run's two
    code, seen, err = _state(capsys, "inspect", "--out", out)
    assert code == 0 and seen["operators"][0]["keys"] == 0, err
    compactions = history.history(state)["compactions"]
    assert compactions[["expired_keys", "keys_before", "keys_after"]].values.tolist() == [[2, 2, 0]]

    # The run continues after the sweep: c1's group started afresh (n = 1 again, as in Flink
    # after an expiry), which parity explains by the expired keys; what was emitted stays.
    assert main(_args(tmp_path)) == 0, capsys.readouterr().err
    capsys.readouterr()
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["parity"]["verdict"] == "explained_by_ttl", report["parity"]
    assert report["stream"]["ttl_expired_keys"] == 2
    assert (tmp_path / "out" / "changelog.csv").read_text().startswith(changelog)


def test_compact_waits_for_input_the_stream_has_not_read(spark, tmp_path, capsys):
    assert main(_args(tmp_path, "--stop-after-batches", "1")) == 0, capsys.readouterr().err
    capsys.readouterr()
    state = tmp_path / "out" / "_state"
    lifecycle.offer(state, "orders", lifecycle.staged_files(state, "orders")[:2])
    code, _, err = _state(capsys, "compact", "--out", str(tmp_path / "out"))
    assert code == 2 and "has not read yet (orders/part-000001.parquet)" in err


def test_inspect_counts_the_keys_in_bucket_pages_of_a_finished_stream(spark, tmp_path, capsys):
    """OVER keeps a page per bucket of keys (stream/over.py): inspect counts the keys in
    them, and a finished stream's watermark (past every event time) reads as end of input."""
    (tmp_path / "ddl.sql").write_text(
        "CREATE TABLE t (k STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts);\n")
    (tmp_path / "q.sql").write_text(
        "SELECT k, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND "
        "CURRENT ROW) AS s FROM t\n")
    (tmp_path / "t.csv").write_text("k,v,ts\n" + "".join(
        f"k{i % 7},{i},2024-01-01 00:00:{i:02d}\n" for i in range(30)))
    assert main(["run", "--sql", str(tmp_path / "ddl.sql"), "--sql", str(tmp_path / "q.sql"),
                 "--data", f"t={tmp_path / 't.csv'}", "--out", str(tmp_path / "out"),
                 "--mode", "stream"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    code, seen, err = _state(capsys, "inspect", "--out", str(tmp_path / "out"))
    assert code == 0, err
    assert seen["watermark"] == "end of input"
    [over] = seen["operators"]
    assert (over["operator"], over["keys"]) == ("over", 7) and 1 <= over["rows"] <= 7, over
