"""Interval joins (stream/interval_join.py) and event-time temporal joins
(stream/temporal_join.py): the case corpora against real Flink (at the level of the plan,
tests/planlevel.py), the operators' rules through the harness (rows and watermarks in,
changelog out), Structured Streaming restarts, late rows in a run, and what is refused.

Flink's two sources race, so its changelog order is not reproducible: each case compares the
finals (stream and batch) with Flink's and checks what both joins guarantee: every changelog
row is an insert (an outer row is emitted once, never retracted). Flink 2.3's batch mode fails
on temporal joins: their batch finals are Flink's streaming result with one watermark at the
end (tests/oracle/regen_expected.py), which is what batch semantics mean.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from operators_lib.errors import SqlError
from operators_lib.plan import EMIT_TS, OP, ROWNUM, Calc, Join, find
from operators_lib.runs.lifecycle import run
from operators_lib.runs.spec import RunSpec
from operators_lib.sql import load_script
from operators_lib.sql.planner import compile_query
from operators_lib.stream import calc
from operators_lib.stream.event_time import TIME_MS
from operators_lib.stream.interval_join import IntervalJoinProcessor, IntervalJoinSpec
from operators_lib.stream.temporal_join import TemporalJoinProcessor, TemporalJoinSpec
from tests.caselib import all_cases, assert_final, assert_resumes, read_csv
from tests.harness import HarnessRuntime, feed, insert
from tests.planlevel import run_case

CASES = all_cases("interval") + all_cases("temporal")


# Several rows per micro-batch (a row's match in its own micro-batch): a few cases suffice.
BATCHED = ["interval/left_padded_later", "interval/full_residual_strict", "temporal/seed_rates",
           "temporal/dedup_view"]


@pytest.mark.parametrize("case, rows_per_batch", [(c, 1) for c in CASES] + [
    (c, 3) for c in CASES if c.id in BATCHED], ids=lambda x: getattr(x, "id", f"{x}_rows"))
def test_finals_equal_flink_and_output_is_append_only(spark, tmp_path, case, rows_per_batch):
    run = run_case(spark, case, tmp_path, rows_per_batch=rows_per_batch)
    assert run.parity() == "equal"
    assert run.micro_batches >= 3
    assert_final(case, run, "stream.csv", "stream_final.csv")
    assert_final(case, run, "batch.csv", "batch_final.csv")
    ops = {op for _, op, _ in run.changes}
    assert ops == {"+I"}, ops


@pytest.mark.parametrize("case_id", ["interval/left_padded_later", "temporal/dedup_view"])
def test_restart_from_checkpoint(spark, tmp_path, case_id):
    case = next(c for c in CASES if c.id == case_id)
    assert_resumes(case, spark, tmp_path, rows_per_batch=2, stop_after=2)


_SPEC = IntervalJoinSpec("LEFT", ("k0",), ("l0", "l1"), ("r0", "r1"), 0, 10,
                         late_tags=(11, 22), integral=("l0", "r0"))


def _rows(side: int, key: str | None, times: list[int], first: int) -> pd.DataFrame:
    """Rows of one side (``l0``/``r0``: their row numbers, ``l1``/``r1``: the key)."""
    mine, theirs = (["l0", "l1"], ["r0", "r1"]) if side == 0 else (["r0", "r1"], ["l0", "l1"])
    return insert(first, times=times, side=side, k0=key, **{
        mine[0]: list(range(first, first + len(times))), mine[1]: key, theirs[0]: None,
        theirs[1]: None})


def test_outer_row_is_padded_once_no_match_can_arrive_and_state_is_cleaned():
    """LEFT join, ``r.t + 0 <= l.t <= r.t + 10``: a left row waits while the watermark is
    below its time (a right row at or before it may still come); a late row is dropped."""
    proc = IntervalJoinProcessor(_SPEC)
    out = feed(proc, ["k0"], [
        (pd.concat([_rows(0, "a", [20, 40], 0), _rows(1, "a", [15], 0)]), 0),
        (_rows(1, "a", [5], 1), 12),   # matches left 0 (t=20 in [5, 15]) ... late? 5 <= 12
        (_rows(1, "a", [18], 2), 12),  # matches left 0
        (None, 20),                    # left 0 (t=20) leaves: matched, nothing to pad
        (None, 40),                    # left 1 (t=40) leaves unmatched: padded
    ], "EventTime")
    got = [[(o, r) for o, r in zip(f[OP], f[ROWNUM])] if len(f) else [] for f in out]
    assert got == [[("+I", 0)], [("LATE", 1)], [("+I", 2)], [], [("+I", 1)]], got
    assert out[0]["r0"].tolist() == [0] and out[2]["r0"].tolist() == [2]
    assert out[4]["r0"].isna().all() and out[4]["l0"].tolist() == [1]
    assert out[1][EMIT_TS].tolist() == [22]  # the late row's table
    proc.handle.key = ("a",)
    assert proc.state.load() is None  # nothing left in state


def test_state_stays_bounded_by_the_interval():
    """Rows marching on in time: state holds only the rows the interval still allows."""
    proc = IntervalJoinProcessor(_SPEC)
    sizes = []
    batches = [(pd.concat([_rows(0, "a", [t], t), _rows(1, "a", [t], t)]), t - 5)
               for t in range(100, 2100, 100)]
    for i in range(1, len(batches) + 1):
        proc = IntervalJoinProcessor(_SPEC)
        feed(proc, ["k0"], batches[:i], "EventTime")
        proc.handle.key = ("a",)
        page = proc._load()
        sizes.append(sum(len(b[TIME_MS]) for b in page["rows"] if b is not None))
    assert max(sizes) <= 3, sizes


@pytest.mark.parametrize("on, bounds", [
    ("o.ts BETWEEN s.ts - INTERVAL '1' SECOND AND s.ts + INTERVAL '1' SECOND "
     "AND o.cust = 'a'", (-1000, 1000)),
    ("s.ts + INTERVAL '2' MINUTE > o.ts AND o.ts > s.ts", (1, 119_999)),
    ("o.ts = s.ts", (0, 0)),
    ("o.ts >= s.ts", None),  # one bound only: a regular join
    ("o.ts BETWEEN s.ts AND CAST(s.ts AS TIMESTAMP(3)) + INTERVAL '1' SECOND", None),
])
def test_which_joins_are_interval_joins(spark, tmp_path, on, bounds):
    case = next(c for c in CASES if c.id == "interval/left_padded_later")
    (tmp_path / "q.sql").write_text(
        f"SELECT o.oid, s.carrier FROM orders o JOIN ships s ON o.oid = s.oid AND {on}")
    plan = compile_query(load_script([case.dir / "ddl.sql", tmp_path / "q.sql"]), spark)
    iv = find(plan, Join)[0].interval
    assert (iv and (iv.lower_ms, iv.upper_ms)) == bounds


def test_interval_join_result_feeding_an_event_time_operator_is_refused(spark, tmp_path):
    case = next(c for c in CASES if c.id == "interval/left_padded_later")
    (tmp_path / "q.sql").write_text(
        "SELECT oid, COUNT(*) OVER (PARTITION BY oid ORDER BY order_ts "
        "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS n FROM (\n"
        "SELECT o.oid, o.ts AS order_ts FROM orders o JOIN ships s ON o.oid = s.oid "
        "AND s.ts BETWEEN o.ts AND o.ts + INTERVAL '10' SECOND)")
    with pytest.raises(SqlError) as e:
        run(RunSpec.bounded_run([case.dir / "ddl.sql", tmp_path / "q.sql"], case.data, "both",
                      tmp_path / "out"), spark)
    assert e.value.exit_code == 2
    assert "an OVER window over an interval join's result is not supported yet" in str(e.value)
    assert "line 1" in str(e.value)


def test_late_rows_of_either_table_are_listed_and_parity_explains_them(spark, tmp_path):
    case = next(c for c in CASES if c.id == "interval/left_padded_later")
    (tmp_path / "orders.csv").write_text(
        "oid,cust,ts\n1,a,2024-01-01 00:00:01\n2,b,2024-01-01 00:00:20\n"
        "3,c,2024-01-01 00:00:05\n")
    (tmp_path / "ships.csv").write_text(
        "oid,carrier,ts\n1,x,2024-01-01 00:00:03\n2,y,2024-01-01 00:00:22\n"
        "3,z,2024-01-01 00:00:06\n")
    result = run(RunSpec.bounded_run(case.sql, {"orders": tmp_path / "orders.csv",
                                      "ships": tmp_path / "ships.csv"},
                           "both", tmp_path / "out", 1), spark, runtime=HarnessRuntime())
    assert result.exit_code == 0, result.message
    assert result.report.parity.verdict == "explained_by_late_rows"
    late = sorted(tuple(r[:2]) for r in read_csv(tmp_path / "out" / "late.csv")[1:])
    assert late == [("orders", "3"), ("ships", "3")], late


_TEMPORAL = TemporalJoinSpec("LEFT", ("k0",), ("l0", "l1"), ("r0", "r1"), False,
                             late_tags=(11, 22), integral=("l0", "r0"))


def _picked(frame: pd.DataFrame) -> list[tuple]:
    """(op, left row, version row or None) per output row."""
    return [(o, int(lr) if o == "+I" else None, None if pd.isna(v) else int(v))
            for o, lr, v in zip(frame[OP], frame["l0"], frame["r0"])] if len(frame) else []


def test_temporal_join_picks_the_version_valid_at_the_left_rows_time():
    """Left rows wait for the watermark, then join the latest version at or before their time
    (a later version of the same time replaces the earlier one); LEFT pads a row with no
    version; rows at or behind the watermark on arrival are late, either side."""
    proc = TemporalJoinProcessor(_TEMPORAL)
    out = feed(proc, ["k0"], [
        (pd.concat([_rows(1, "a", [10, 20, 20], 0), _rows(0, "a", [5, 15, 25], 0)]), 0),
        (pd.concat([_rows(1, "a", [30], 3), _rows(0, "a", [32], 3)]), 16),  # 5, 15 fire
        (pd.concat([_rows(1, "a", [12], 4), _rows(0, "a", [14], 4)]), 16),  # both late
        (None, 40),  # 25 (version 20: the later row 2) and 32 (version 30) fire
    ], "EventTime")
    assert [_picked(f) for f in out] == [
        [], [("+I", 0, None), ("+I", 1, 0)],
        [("LATE", None, None), ("LATE", None, None)],
        [("+I", 2, 2), ("+I", 3, 3)]], [_picked(f) for f in out]
    assert sorted(out[2][EMIT_TS].tolist()) == [11, 22]
    proc.handle.key = ("a",)
    page = proc._load()
    assert page.get("left") is None and page["versions"]["r0"].tolist() == [3]  # the newest


def test_temporal_join_of_a_deduplicated_history_skips_rows_older_than_the_latest():
    spec = TemporalJoinSpec("INNER", ("k0",), ("l0", "l1"), ("r0", "r1"), True,
                            late_tags=(11, 22), integral=("l0", "r0"))
    out = feed(TemporalJoinProcessor(spec), ["k0"], [
        (_rows(1, "a", [10, 30, 20], 0), 0),  # 20 arrives after 30: no version
        (pd.concat([_rows(0, "a", [25], 0), _rows(0, None, [35], 1)]), 0),
        (None, 40),
    ], "EventTime")
    assert _picked(out[2]) == [("+I", 0, 0)]  # version 10, not 20; the NULL key matches none


def test_temporal_state_keeps_one_version_behind_the_watermark_per_key():
    sizes = []
    proc = TemporalJoinProcessor(_TEMPORAL)
    batches = [(pd.concat([_rows(1, "a", [t], t), _rows(0, "a", [t + 1], t)]), t - 50)
               for t in range(100, 3100, 100)]
    for i in range(5, len(batches) + 1, 5):
        proc = TemporalJoinProcessor(_TEMPORAL)
        feed(proc, ["k0"], batches[:i], "EventTime")
        proc.handle.key = ("a",)
        page = proc._load()
        sizes.append(sum(len(page[s][TIME_MS]) for s in ("left", "versions")
                         if page.get(s) is not None))
    assert max(sizes) <= 4, sizes


_TEMPORAL_DDL = """CREATE TABLE orders (oid INT, cur STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND);
CREATE TABLE rates (cur STRING, rate INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND, PRIMARY KEY (cur) NOT ENFORCED);
CREATE TABLE plain (cur STRING, rate INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND);
CREATE TABLE pt (oid INT, cur STRING, pt AS PROCTIME());
CREATE TABLE dim (cur STRING, rate INT);
"""


@pytest.mark.parametrize("query, needle", [
    ("SELECT o.oid FROM orders o RIGHT JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r "
     "ON o.cur = r.cur", "a temporal join is INNER or LEFT"),
    ("SELECT o.oid FROM orders o JOIN plain FOR SYSTEM_TIME AS OF o.ts AS r "
     "ON o.cur = r.cur", "a table with a PRIMARY KEY and a WATERMARK"),
    ("SELECT o.oid FROM orders o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r "
     "ON o.oid = r.rate", "must equate every column of the versioned side's key (cur)"),
    ("SELECT o.oid FROM orders o JOIN rates FOR SYSTEM_TIME AS OF o.oid AS r "
     "ON o.cur = r.cur", "takes a time attribute of the left input"),
    ("SELECT r.rate FROM rates FOR SYSTEM_TIME AS OF TIMESTAMP '2024-01-01 00:00:00' AS r "
     "JOIN orders o ON o.cur = r.cur", "belongs to the right side of a JOIN"),
    ("SELECT oid, COUNT(*) OVER (PARTITION BY oid ORDER BY ts ROWS BETWEEN UNBOUNDED "
     "PRECEDING AND CURRENT ROW) FROM (SELECT o.oid, o.ts FROM orders o JOIN rates FOR "
     "SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur)",
     "an OVER window over a temporal join's result is not supported yet"),
    ("SELECT o.oid FROM pt o JOIN dim FOR SYSTEM_TIME AS OF o.pt AS d ON o.oid > d.rate",
     "a lookup join (FOR SYSTEM_TIME AS OF a PROCTIME() column, a table without PRIMARY KEY "
     "and WATERMARK) needs an equality condition"),
    ("SELECT * FROM (SELECT o.oid, PROCTIME() AS p FROM orders o JOIN dim d ON o.cur = d.cur)",
     "PROCTIME() in a SELECT list is supported over one table"),
    ("SELECT oid, PROCTIME() + INTERVAL '1' SECOND FROM orders",
     "PROCTIME() is supported as a computed column (x AS PROCTIME()) or as an item"),
])
def test_temporal_joins_flink_refuses_or_twinflow_cannot_run_yet_exit_2(spark, tmp_path, query,
                                                                         needle):
    (tmp_path / "ddl.sql").write_text(_TEMPORAL_DDL)
    (tmp_path / "q.sql").write_text("-- the query is on line 2\n" + query)
    with pytest.raises(SqlError) as e:
        compile_query(load_script([tmp_path / "ddl.sql", tmp_path / "q.sql"]), spark)
    assert e.value.exit_code == 2
    assert needle in str(e.value), str(e.value)
    assert "line 2" in str(e.value), str(e.value)


def test_processing_time_temporal_join_takes_the_version_current_on_arrival(spark, tmp_path):
    """Stream: each order joins its key's latest version as of its micro-batch (that
    micro-batch's versions included); batch: the latest version of the whole input; parity
    does not apply. A NULL key joins the NULL key's version, as in the event-time join."""
    (tmp_path / "ddl.sql").write_text(_TEMPORAL_DDL)
    (tmp_path / "q.sql").write_text(
        "SELECT o.oid, o.cur, r.rate FROM pt AS o LEFT JOIN rates FOR SYSTEM_TIME AS OF o.pt "
        "AS r ON o.cur = r.cur")
    (tmp_path / "pt.csv").write_text("oid,cur\n1,EUR\n2,EUR\n3,GBP\n4,EUR\n5,\n")
    (tmp_path / "rates.csv").write_text(
        "cur,rate,ts\nEUR,10,2024-01-01 00:00:01\nEUR,11,2024-01-01 00:00:02\n"
        "USD,5,2024-01-01 00:00:03\n,7,2024-01-01 00:00:04\n")
    result = run(RunSpec.bounded_run([tmp_path / "ddl.sql", tmp_path / "q.sql"],
                           {"pt": tmp_path / "pt.csv", "rates": tmp_path / "rates.csv"},
                           "both", tmp_path / "out", 1), spark, runtime=HarnessRuntime())
    assert result.exit_code == 0, result.message
    assert result.report.parity.verdict == "not_applicable"
    stream = sorted(tuple(r) for r in read_csv(tmp_path / "out" / "stream.csv")[1:])
    batch = sorted(tuple(r) for r in read_csv(tmp_path / "out" / "batch.csv")[1:])
    assert stream == [("1", "EUR", "10"), ("2", "EUR", "11"), ("3", "GBP", ""),
                      ("4", "EUR", "11"), ("5", "", "7")], stream
    assert batch == [("1", "EUR", "11"), ("2", "EUR", "11"), ("3", "GBP", ""),
                     ("4", "EUR", "11"), ("5", "", "7")], batch


def test_join_condition_values_of_both_inputs_null_and_overflow():
    """Values a residual computes from both inputs (stream/calc.py), over candidate pairs:
    NULL in, NULL out; an INT result out of range fails, as Spark's ANSI arithmetic."""
    add = Calc("+", ("x", "y"), "INT")
    cat = Calc("||", ("s", "x"), "STRING")
    cols = {"x": np.array([1, None, 2**31 - 2], dtype=object), "y": np.array([2, 5, 1]),
            "s": np.array(["a", "b", None], dtype=object)}
    assert calc.vector(add, cols.__getitem__).tolist() == [3, None, 2**31 - 1]
    assert calc.vector(cat, cols.__getitem__).tolist() == ["a1", None, None]
    with pytest.raises(ArithmeticError):
        calc.vector(add, {"x": np.array([2**31 - 1]), "y": np.array([1])}.__getitem__)
    with pytest.raises(ArithmeticError):
        calc.vector(Calc("NEG", ("x",), "INT"), {"x": np.array([-(2**31)])}.__getitem__)


def test_lookup_join_joins_every_row_of_the_table_whatever_its_micro_batch(spark, tmp_path):
    """A lookup join (a PROCTIME() made by the query, a table without PRIMARY KEY and
    WATERMARK: nexmark's q13): each order joins every row of its key, those staged for later
    micro-batches too (the table is read whole, not streamed); NULL keys match nothing; stream
    equals batch."""
    (tmp_path / "ddl.sql").write_text(_TEMPORAL_DDL)
    (tmp_path / "q.sql").write_text(
        "SELECT o.oid, d.rate FROM (SELECT *, PROCTIME() AS p FROM orders) AS o LEFT JOIN dim "
        "FOR SYSTEM_TIME AS OF o.p AS d ON o.cur = d.cur")
    (tmp_path / "orders.csv").write_text(
        "oid,cur,ts\n1,EUR,2024-01-01 00:00:01\n2,GBP,2024-01-01 00:00:02\n"
        "3,,2024-01-01 00:00:03\n")
    (tmp_path / "dim.csv").write_text("cur,rate\nUSD,1\nUSD,2\nEUR,10\nEUR,11\n,7\n")
    result = run(RunSpec.bounded_run([tmp_path / "ddl.sql", tmp_path / "q.sql"],
                           {"orders": tmp_path / "orders.csv", "dim": tmp_path / "dim.csv"},
                           "both", tmp_path / "out", 1), spark, runtime=HarnessRuntime())
    assert result.exit_code == 0, result.message
    assert result.report.parity.verdict == "equal"
    stream = sorted(tuple(r) for r in read_csv(tmp_path / "out" / "stream.csv")[1:])
    assert stream == [("1", "10"), ("1", "11"), ("2", ""), ("3", "")], stream
