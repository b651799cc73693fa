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
from operators_lib.parity.compare import without_expired
from operators_lib.plan import TTL_KEY
from operators_lib.runs.lifecycle import run
from operators_lib.runs.query_config import QueryConfig
from operators_lib.runs.spec import RunSpec
from operators_lib.sql import load_script
from operators_lib.sql.script import parse_duration_ms
from operators_lib.types import FlinkType
from tests.caselib import CASES, Case, as_multiset, column_types, normalize, read_csv
from tests.harness import HarnessRuntime
from tests.scheduled import audit, batch_parity, stream_increment

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


@pytest.mark.parametrize("query, what", [
    ("SELECT order_id, COUNT(*) OVER (PARTITION BY cust_id ORDER BY order_id ROWS BETWEEN 1 "
     "PRECEDING AND CURRENT ROW) AS n FROM orders", "an OVER window"),
    ("SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY cust_id ORDER BY order_id) "
     "AS rn FROM orders) WHERE rn <= 1", "a TopN or deduplication"),
])
def test_a_ttl_on_state_it_does_not_expire_is_refused(spark, tmp_path, query, what):
    """Flink expires an OVER's, a TopN's and a deduplication's state under the TTL too:
    running them without would give another result without saying so."""
    from operators_lib.sql.planner import compile_query

    sql = tmp_path / "q.sql"
    sql.write_text(DDL + f"SET 'table.exec.state.ttl' = '1 h';\n{query}")
    with pytest.raises(SqlError, match=f"table.exec.state.ttl' with {what} is not supported.*"
                                       "line 4"):
        compile_query(load_script([sql]), spark)


def test_unreadable_ttl_is_an_error_with_its_line(tmp_path):
    sql = tmp_path / "q.sql"
    sql.write_text(DDL + "SET 'table.exec.state.ttl' = 'soon';\nSELECT * FROM orders")
    with pytest.raises(SqlError, match=r"table.exec.state.ttl.*'soon'.*line 3"):
        load_script([sql])


def _write(tmp_path, query: str) -> None:
    (tmp_path / "ddl.sql").write_text(DDL)
    (tmp_path / "q.sql").write_text(f"SET 'table.exec.state.ttl' = '{TTL_S} s';\n{query}")
    (tmp_path / "customers.csv").write_text(CUSTOMERS)
    (tmp_path / "orders.csv").write_text(ORDERS)


def _spec(tmp_path, mode: str, stop_after: int | None) -> RunSpec:
    """A run of the query ``_write`` wrote, a row per micro-batch."""
    return RunSpec.bounded_run([tmp_path / "ddl.sql", tmp_path / "q.sql"],
                               {"customers": tmp_path / "customers.csv",
                                "orders": tmp_path / "orders.csv"}, mode, tmp_path / "out", 1,
                               stop_after)


@pytest.mark.parametrize("query, batch_rows", [
    # c3 meets order 1 and c2 order 3 only after their partners' state expired; c1's second
    # order arrives after c1 expired.
    ("SELECT c.cust_id, c.name, o.order_id FROM customers c "
     "LEFT JOIN orders o ON c.cust_id = o.cust_id", 4),
    # c1's group expires before its second order: it starts again from 1.
    ("SELECT cust_id, COUNT(*) AS n FROM orders GROUP BY cust_id", 3),
])
def test_expired_state_is_dropped_and_parity_explains_it(spark, tmp_path, query, batch_rows):
    _write(tmp_path, query)
    first = run(_spec(tmp_path, "stream", 2), spark)
    assert first.exit_code == 0 and not first.report.stream.complete
    time.sleep(TTL_S + 2)  # everything stored so far is now idle for longer than the TTL
    second = run(_spec(tmp_path, "both", None), spark)
    assert second.exit_code == 0, second.message
    parity = second.report.parity
    assert parity.verdict == "explained_by_ttl", parity
    assert second.report.stream.ttl_expired_keys >= 1
    assert parity.only_in_batch >= 1  # TTL really changed the stream's result
    assert second.report.batch.rows == batch_rows


def test_a_ttl_that_never_expires_keeps_flinks_result(spark, tmp_path):
    case = Case(CASES / "join" / "left_outer")
    query = tmp_path / "query.sql"
    query.write_text("SET 'table.exec.state.ttl' = '1 h';\n" + (case.dir / "query.sql").read_text())
    result = run(RunSpec.bounded_run([case.dir / "ddl.sql", query], case.data, "both",
                                     tmp_path, 2), spark, runtime=HarnessRuntime())
    assert result.exit_code == 0, result.message
    assert result.report.parity.verdict == "equal"
    assert result.report.stream.ttl_expired_keys == 0
    types = column_types(tmp_path)
    _, ours = normalize(read_csv(tmp_path / "stream.csv"), types)
    _, flink = normalize(case.expected("stream_final.csv"), types)
    assert as_multiset(ours) == as_multiset(flink)


def test_a_scheduled_run_explains_the_rows_of_keys_whose_state_expired(spark, tmp_path):
    """Scheduled runs (the DAG's steps, in-process): state idle for longer than the TTL between
    two runs is dropped, and the second run's parity and the audit set aside the rows of the
    expired keys, as `twinflow run` does (they used to fail the run: batch never forgets).

    run 1: c1, c2, c3 and orders 1 (c3), 2 (c1); run 2, after the TTL: orders 3 (c2) and
    4 (c1) find no customer any more (LEFT JOIN: nothing emitted), where batch joins them.
    """
    (tmp_path / "ddl.sql").write_text(DDL)
    (tmp_path / "q.sql").write_text(
        f"SET 'table.exec.state.ttl' = '{TTL_S} s';\nSELECT c.cust_id, c.name, o.order_id "
        "FROM customers c LEFT JOIN orders o ON c.cust_id = o.cust_id")
    inputs = {t: tmp_path / "incoming" / t for t in ("customers", "orders")}
    cfg = QueryConfig(name="ttl", sql=[tmp_path / "ddl.sql", tmp_path / "q.sql"], inputs=inputs,
                      expectations="none", publish_format="csv", rows_per_batch=100)
    files = {1: {"customers": CUSTOMERS, "orders": "order_id,cust_id\n1,c3\n2,c1\n"},
             2: {"orders": "order_id,cust_id\n3,c2\n4,c1\n"}}
    state = tmp_path / "state"
    for n, tables in files.items():
        for table, text in tables.items():
            inputs[table].mkdir(parents=True, exist_ok=True)
            (inputs[table] / f"{n}.csv").write_text(text)
        if n == 2:
            time.sleep(TTL_S + 2)  # everything stored in run 1 is now idle for longer
        stream_increment(cfg, spark, state, tmp_path / f"run{n}")
        parity = batch_parity(cfg, spark, state, tmp_path / f"run{n}")
        if n == 1:
            assert parity["verdict"] == "equal", parity
    assert set((tmp_path / "run2" / "stream.csv").read_text().splitlines()[1:]) == {
        "c1,Ada,2", "c2,Bob,", "c3,Cy,1"}
    # batch: c1 also with order 4, c2 with order 3 (instead of its null-padded row)
    assert (parity["verdict"], parity["only_in_batch"], parity["only_in_stream"]) == (
        "explained_by_ttl", 2, 1), parity
    assert parity["ttl_expired_keys"] == 2  # c1, c2: the keys run 2 touched
    # Run 3 has no new input: what runs 1 and 2 left out stays for the audit.
    assert stream_increment(cfg, spark, state, tmp_path / "run3")["new_input_rows"] == {
        "customers": 0, "orders": 0}
    assert batch_parity(cfg, spark, state, tmp_path / "run3")["verdict"] == "equal"
    report = audit(cfg, spark, state, tmp_path / "audit")
    assert (report["verdict"], report["ttl_expired_keys"]) == ("explained_by_ttl", 2), report


def test_expired_keys_explain_only_their_own_rows(spark):
    """The explanation is no blanket pass: a row that differs outside the expired keys still
    differs."""
    types = {"k": FlinkType("STRING"), "n": FlinkType("BIGINT")}
    batch = spark.createDataFrame([("a", 2, 1), ("b", 1, 2), ("c", 5, 3)], ["k", "n", TTL_KEY])
    stream = spark.createDataFrame([("a", 1, 1), ("b", 1, 2), ("c", 4, 3)], ["k", "n", TTL_KEY])
    expired = spark.createDataFrame([(1,)], [TTL_KEY])
    diff = without_expired(batch, stream, expired, types, ["k", "n"])
    assert (diff.only_batch, diff.only_stream) == ([("c", 5)], [("c", 4)])
    diff = without_expired(batch, stream, expired.union(spark.createDataFrame([(3,)], [TTL_KEY])),
                           types, ["k", "n"])
    assert diff.equal
