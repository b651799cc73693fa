"""State TTL (``SET 'table.exec.state.ttl'``): idle state is dropped, and parity says which rows
differ because of it.

The TTL clock is the micro-batch's processing time, so the tests make state idle for real: a
stream stopped after two micro-batches, a pause longer than the TTL, then the resumed stream.
Flink has no deterministic TTL run to compare with; what is checked is the defining property:
every row that differs from batch belongs to a key whose state expired, and everything else is
equal. With a TTL that never expires the finals must equal Flink's (no TTL) result.
"""

from __future__ import annotations

import time

import pytest

from operators_lib.errors import SqlError
from operators_lib.pipeline import RunConfig, run
from operators_lib.sql import load_script
from operators_lib.sql.script import parse_duration_ms
from tests.caselib import CASES, Case, as_multiset, column_types, normalize, read_csv
from tests.harness import HarnessRuntime

DDL = """CREATE TABLE customers (cust_id STRING, name STRING);
CREATE TABLE orders (order_id INT, cust_id STRING);
"""
CUSTOMERS = "cust_id,name\nc1,Ada\nc2,Bob\nc3,Cy\n"
ORDERS = "order_id,cust_id\n1,c3\n2,c1\n3,c2\n4,c1\n"
TTL_S = 5


def test_durations_read_like_flink():
    assert parse_duration_ms("1 h") == 3_600_000
    assert parse_duration_ms("30 min") == 1_800_000
    assert parse_duration_ms("10s") == 10_000
    assert parse_duration_ms("250") == 250
    assert parse_duration_ms("ten minutes") is None


def test_unreadable_ttl_is_an_error_with_its_line(tmp_path):
    sql = tmp_path / "q.sql"
    sql.write_text(DDL + "SET 'table.exec.state.ttl' = 'soon';\nSELECT * FROM orders")
    with pytest.raises(SqlError, match=r"table.exec.state.ttl.*'soon'.*line 3"):
        load_script([sql])


def _write(tmp_path, query: str):
    (tmp_path / "ddl.sql").write_text(DDL)
    (tmp_path / "q.sql").write_text(f"SET 'table.exec.state.ttl' = '{TTL_S} s';\n{query}")
    (tmp_path / "customers.csv").write_text(CUSTOMERS)
    (tmp_path / "orders.csv").write_text(ORDERS)
    return RunConfig([tmp_path / "ddl.sql", tmp_path / "q.sql"],
                     {"customers": tmp_path / "customers.csv",
                      "orders": tmp_path / "orders.csv"}, "stream", tmp_path / "out", 1, 2)


@pytest.mark.parametrize("query, batch_rows", [
    # c3 meets order 1 and c2 order 3 only after their partners' state expired; c1's second
    # order arrives after c1 expired.
    ("SELECT c.cust_id, c.name, o.order_id FROM customers c "
     "LEFT JOIN orders o ON c.cust_id = o.cust_id", 4),
    # c1's group expires before its second order: it starts again from 1.
    ("SELECT cust_id, COUNT(*) AS n FROM orders GROUP BY cust_id", 3),
])
def test_expired_state_is_dropped_and_parity_explains_it(spark, tmp_path, query, batch_rows):
    cfg = _write(tmp_path, query)
    first = run(cfg, spark)
    assert first.exit_code == 0 and not first.report["stream"]["complete"]
    time.sleep(TTL_S + 2)  # everything stored so far is now idle for longer than the TTL
    cfg.mode, cfg.stop_after_batches = "both", None
    second = run(cfg, spark)
    assert second.exit_code == 0, second.message
    parity = second.report["parity"]
    assert parity["verdict"] == "explained_by_ttl", parity
    assert second.report["stream"]["ttl_expired_keys"] >= 1
    assert parity["only_in_batch"] >= 1  # TTL really changed the stream's result
    assert second.report["batch"]["rows"] == batch_rows


def test_a_ttl_that_never_expires_keeps_flinks_result(spark, tmp_path):
    case = Case(CASES / "join" / "left_outer")
    query = tmp_path / "query.sql"
    query.write_text("SET 'table.exec.state.ttl' = '1 h';\n" + (case.dir / "query.sql").read_text())
    result = run(RunConfig([case.dir / "ddl.sql", query], case.data, "both", tmp_path, 2), spark,
                 runtime=HarnessRuntime())
    assert result.exit_code == 0, result.message
    assert result.report["parity"]["verdict"] == "equal"
    assert result.report["stream"]["ttl_expired_keys"] == 0
    types = column_types(tmp_path)
    _, ours = normalize(read_csv(tmp_path / "stream.csv"), types)
    _, flink = normalize(case.expected("stream_final.csv"), types)
    assert as_multiset(ours) == as_multiset(flink)
