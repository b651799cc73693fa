"""The time-window case corpus (group windows and window TVFs), expected results from real Flink.

Per case, at the level of its plan (tests/planlevel.py: stream on the operator harness): a
per-row stream (a watermark after every row, Flink's oracle setting), whose changelog and stream
final must equal Flink's, with the late rows Flink's rule gives (a row is late for a window that
had fired when it arrived), or a window TVF's rows (each row once per window, at once); a stream
of several micro-batches in both modes, whose batch final must equal Flink's, in parity. Through
``twinflow run``: on Structured Streaming, a case stopped and resumed from its checkpoint gives
Flink's changelog, a window join and processing-time windows run; the parity verdicts of late
rows and of split sessions. And what is not implemented yet is refused by name (exit 2).
"""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from operators_lib.errors import InputError, SqlError
from operators_lib.runs.lifecycle import run
from operators_lib.runs.spec import RunSpec
from tests.caselib import all_cases, assert_changelog, assert_final, read_csv
from tests.harness import HarnessRuntime
from tests.planlevel import PlanRun, run_case

# Processing-time cases are no oracle cases (test_processing_time_window_*).
CASES = [c for c in all_cases("windows") if not c.meta.get("proctime")]
RESTART = ["windows/cascade_tvf", "windows/window_topn"]


def _two_sources(case) -> bool:
    return "two sources" in case.meta.get("final_only", "")


def _late(run: PlanRun) -> bool:
    return bool(run.late_rows or run.late_windows)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_per_row_stream_equals_flink(spark, tmp_path, case):
    """Batch mode and parity are the several-micro-batch test's (batch does not depend on the
    micro-batches), except for two-source cases, which run per row only."""
    both = _two_sources(case)
    run = run_case(spark, case, tmp_path, rows_per_batch=1, mode="both" if both else "stream")
    # No changelog.csv: Flink's streaming mode refuses the query; "final_only": two sources.
    if (case.dir / "expected" / "changelog.csv").exists() and "final_only" not in case.meta:
        assert_changelog(case, run)
    assert_final(case, run, "stream.csv", "stream_final.csv")
    if "late_rows" in case.meta:
        assert run.late_rows == case.meta["late_rows"]
        assert len(run.late_windows) == case.meta["late_row_windows"]
        assert run.session_splits == case.meta.get("session_splits", 0)
    if both:
        assert_final(case, run, "batch.csv", "batch_final.csv")
        assert run.parity() == ("explained_by_late_rows" if _late(run) else "equal")


# Two-source cases (window joins) run per row only: their several-micro-batch runs add time,
# not coverage (test_two_source_window_join_reports_late_rows_of_their_table has one).
@pytest.mark.parametrize("case", [c for c in CASES if not _two_sources(c)], ids=lambda c: c.id)
def test_several_micro_batches_parity(spark, tmp_path, case):
    run = run_case(spark, case, tmp_path, rows_per_batch=4)
    # Late rows that change nothing (a deduplication keeping the last row) leave parity equal.
    assert run.parity() in (
        ("not_applicable",) if run.session_splits else
        ("explained_by_late_rows", "equal") if _late(run) else ("equal",))
    # two micro-batches of rows at least, and the end
    assert run.micro_batches >= 3
    assert_final(case, run, "batch.csv", "batch_final.csv")
    if not _late(run) and not run.session_splits:
        assert_final(case, run, "stream.csv", "batch_final.csv")


def test_session_rows_of_one_micro_batch_merge_in_arrival_order(spark, tmp_path):
    """Two rows per micro-batch whose times stay below the highest so far: Flink's watermark
    does not move between them either, so its per-row changelog is exact here. A row whose own
    window has fired merges only into a session open when it arrives: not with a row behind it
    in the same micro-batch (a@22 before a@26: late), but with one before it (b@26, b@22), and
    in a chain (c@16 by c@20 from state, then c@11 by c@16 of the same micro-batch)."""
    case = next(c for c in CASES if c.id == "windows/session_arrival_order")
    run = run_case(spark, case, tmp_path, rows_per_batch=2)
    assert run.late_rows == 1
    assert run.parity() != "failed"  # a run would exit 1
    assert_changelog(case, run)


@pytest.mark.parametrize("case", [c for c in CASES if c.id in RESTART], ids=lambda c: c.id)
def test_restart_from_checkpoint_gives_flinks_changelog(spark, tmp_path, case):
    first = case.run(spark, tmp_path, "stream", rows_per_batch=1, stop_after=5)
    assert first.exit_code == 0
    assert not first.report.stream.complete
    second = case.run(spark, tmp_path, "both", rows_per_batch=1)
    assert second.exit_code == 0, second.message
    assert second.report.stream.complete
    assert second.report.parity.verdict == "explained_by_late_rows"
    assert_changelog(case, tmp_path)


def test_window_join_on_spark_equals_flink(spark, tmp_path):
    """A window join of two window TVFs' rows on Structured Streaming, several rows per
    micro-batch: both sides kept in state until the window fires. (The stateless
    per-micro-batch steps of window aggregates' TopN and joins run on Spark in the
    window_topn restart.)"""
    case = next(c for c in CASES if c.id == "windows/window_join_tvf")
    result = case.run(spark, tmp_path, "both", rows_per_batch=5)
    assert result.exit_code == 0, result.message
    assert result.report.parity.verdict == "equal"
    assert_final(case, tmp_path, "stream.csv", "stream_final.csv")


@pytest.mark.parametrize("case", [c for c in CASES if c.id == "windows/session_group_window"],
                         ids=lambda c: c.id)
def test_split_sessions_make_parity_not_applicable_in_a_run(spark, tmp_path, case):
    """The verdict PlanRun.parity gives a stream that split sessions, from a run's parity."""
    result = case.run(spark, tmp_path, "both", rows_per_batch=1, harness=True)
    assert result.exit_code == 0, result.message
    assert result.report.stream.session_splits == case.meta["session_splits"]
    assert result.report.parity.verdict == "not_applicable", result.report.parity
    assert result.report.parity.session_splits == case.meta["session_splits"]
    assert_final(case, tmp_path, "stream.csv", "stream_final.csv")
    assert_final(case, tmp_path, "batch.csv", "batch_final.csv")


def test_the_users_spark_settings_change_no_result(spark, tmp_path):
    """Spark's settings are the user's (operators_lib/engine/spark.py). Without adaptive execution a
    micro-batch keeps its shuffle partitions, so a task may see a window's markers and no row
    to join: its output must still have the join's schema (an untyped empty column failed the
    run)."""
    from operators_lib.engine.spark import session_conf

    case = next(c for c in CASES if c.id == "windows/session_rows_join")
    with session_conf(spark, {"spark.sql.adaptive.enabled": "false"}):
        result = case.run(spark, tmp_path, "both", rows_per_batch=4)
    assert result.exit_code == 0, result.message
    assert result.report.parity.verdict in ("equal", "explained_by_late_rows")


PROCTIME = [c for c in all_cases("windows") if c.meta.get("proctime")]


@pytest.mark.parametrize("case", PROCTIME, ids=lambda c: c.id)
def test_processing_time_window_seed_query_on_spark(spark, tmp_path, case):
    """Seed 004's processing-time TUMBLE on Structured Streaming, several micro-batches: each
    row counted once in the window of its arrival (windows on minute boundaries, none before
    the run started, none late), every window fired by end of input, batch not run, parity
    not applicable. The counts per window depend on the clock; their sums per user do not."""
    started = datetime.now(UTC).replace(tzinfo=None, second=0, microsecond=0)
    result = case.run(spark, tmp_path, "both", rows_per_batch=40)
    assert result.exit_code == 0, result.message
    report = result.report
    assert report.parity.verdict == "not_applicable"
    assert report.batch is None and report.late_rows == 0
    assert report.stream.micro_batches_this_run >= 3
    counted: dict[str, int] = {}
    for row in read_csv(case.data["user_behavior"])[1:]:
        counted[row[0]] = counted.get(row[0], 0) + (row[3] != "")  # COUNT skips NULL
    out = read_csv(tmp_path / "stream.csv")
    assert out[0] == ["user_id", "behavior_cnt", "end_ts"]
    totals: dict[str, int] = {}
    for user, cnt, end in out[1:]:
        totals[user] = totals.get(user, 0) + int(cnt)
        end_ts = datetime.fromisoformat(end)
        assert end_ts.second == 0 and end_ts.microsecond == 0 and end_ts > started, end
    assert totals == {u: c for u, c in counted.items() if c}
    assert {r[0] for r in read_csv(tmp_path / "changelog.csv")[1:]} == {"+I"}


@pytest.mark.parametrize("case", PROCTIME, ids=lambda c: c.id)
def test_processing_time_windows_are_refused_in_batch_mode(spark, tmp_path, case):
    """Batch mode has no processing time (Flink's refuses it too)."""
    with pytest.raises(InputError) as e:
        case.run(spark, tmp_path, "batch")
    assert e.value.exit_code == 2 and "processing-time window" in str(e.value)


DDL = """CREATE TABLE t (k STRING, v INT, ts TIMESTAMP(3),
  pt AS PROCTIME(), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND);
CREATE TABLE u (k STRING, w INT);
"""
TVF = "TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND))"
AGG = (f"SELECT k, window_start, window_end, COUNT(*) AS c FROM {TVF} GROUP BY k, "
       "window_start, window_end")
INNER = ("SELECT k, TUMBLE_ROWTIME(ts, INTERVAL '10' SECOND) AS rt, COUNT(*) AS c FROM t "
         "GROUP BY k, TUMBLE(ts, INTERVAL '10' SECOND)")


@pytest.mark.parametrize("query, needles", [
    (f"SELECT * FROM (SELECT k, ROW_NUMBER() OVER (PARTITION BY window_start "
     f"ORDER BY v DESC) AS n FROM {TVF}) WHERE n <= 2", ["window TopN / deduplication"]),
    (f"SELECT window_start, COUNT(*) FROM (SELECT * FROM {TVF}) GROUP BY window_start, "
     "window_end", ["a further aggregation over a window aggregate or a window TVF's rows"]),
    ("SELECT k, COUNT(*) FROM (SELECT * FROM TABLE(SESSION(TABLE t PARTITION BY k, "
     "DESCRIPTOR(ts), INTERVAL '1' MINUTE)))\nGROUP BY k, window_start, window_end",
     ["a further aggregation over a window aggregate or a window TVF's rows"]),
    (f"SELECT window_start, COUNT(*) FROM {TVF} WHERE window_start > TIMESTAMP "
     "'2024-01-01 00:00:00.000' GROUP BY window_start, window_end", ["a WHERE on window_start"]),
    ("SELECT COUNT(*) FROM u GROUP BY TUMBLE(k, INTERVAL '1' MINUTE)",
     ["TUMBLE needs a time attribute"]),
    ("SELECT k, TUMBLE_PROCTIME(ts, INTERVAL '1' HOUR) FROM t\nGROUP BY k",
     ["TUMBLE_PROCTIME(..) must name the GROUP BY's window (there is none)", "line 1"]),
    ("SELECT k, TUMBLE_ROWTIME(pt, INTERVAL '1' MINUTE) FROM t\n"
     "GROUP BY k, TUMBLE(pt, INTERVAL '1' MINUTE)",
     ["TUMBLE_ROWTIME(..) needs a window over an event-time attribute", "TUMBLE_PROCTIME"]),
    ("SELECT k, TUMBLE_PROCTIME(ts, INTERVAL '1' MINUTE) FROM t\n"
     "GROUP BY k, TUMBLE(ts, INTERVAL '1' MINUTE)",
     ["TUMBLE_PROCTIME(..) needs a window over a processing-time attribute"]),
    ("SELECT * FROM\nTABLE(TUMBLE(TABLE t, DESCRIPTOR(pt), INTERVAL '1' MINUTE))",
     ["the rows of TABLE(TUMBLE(..)) over a processing-time attribute", "line 2"]),
    ("SELECT COUNT(*) FROM (SELECT k, TUMBLE_PROCTIME(pt, INTERVAL '1' MINUTE) AS p FROM t "
     "GROUP BY k, TUMBLE(pt, INTERVAL '1' MINUTE))\nGROUP BY TUMBLE(p, INTERVAL '1' HOUR)",
     ["a cascade of processing-time windows", "line 2"]),
    ("SELECT * FROM (SELECT k, c, ROW_NUMBER() OVER (PARTITION BY window_start, window_end "
     "ORDER BY c DESC) AS n FROM (SELECT k, window_start, window_end, COUNT(*) AS c FROM "
     "TABLE(TUMBLE(TABLE t, DESCRIPTOR(pt), INTERVAL '1' MINUTE)) GROUP BY k, window_start, "
     "window_end)) WHERE n <= 3", ["window TopN over a processing-time window"]),
    ("SELECT k, HOP_START(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND) FROM t\n"
     "GROUP BY k, TUMBLE(ts, INTERVAL '10' SECOND)", ["HOP_START(..) must name the GROUP BY's"]),
    ("SELECT COUNT(*) FROM t GROUP BY HOP(ts, INTERVAL '3' SECOND, INTERVAL '10' SECOND)",
     ["HOP: the size must be a multiple of the slide"]),
    ("SELECT k, COUNT(*) FROM (SELECT k, COUNT(*) AS c, MAX(ts) AS mt FROM t GROUP BY k)\n"
     "GROUP BY k, TUMBLE(mt, INTERVAL '1' MINUTE)", ["TUMBLE needs a time attribute"]),
    (f"SELECT * FROM (SELECT k, c, ROW_NUMBER() OVER (PARTITION BY rt ORDER BY c DESC) AS n "
     f"FROM ({INNER})) WHERE n <= 3", ["window TopN / deduplication"]),
    (f"SELECT x.k, u.w FROM ({INNER}) x JOIN u ON x.k = u.k GROUP BY x.k, u.w",
     ["a join or a further aggregation"]),
    (f"SELECT t.k FROM {TVF} JOIN u ON t.k = u.k", ["window join"]),
    ("SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end "
     "ORDER BY window_time) AS n FROM (SELECT window_start, window_end, window_time, COUNT(*) "
     f"AS c FROM {TVF} GROUP BY window_start, window_end, window_time)) WHERE n = 1",
     ["window deduplication"]),
    ("SELECT COUNT(*) FROM TABLE(TUMBLE(TABLE t PARTITION BY k, DESCRIPTOR(ts), "
     "INTERVAL '1' MINUTE)) GROUP BY window_start, window_end", ["TUMBLE takes no PARTITION BY"]),
    ("SELECT COUNT(*) FROM TABLE(SESSION(TABLE t PARTITION BY nope, DESCRIPTOR(ts), "
     "INTERVAL '1' MINUTE)) GROUP BY window_start, window_end", ["nope"]),
    # Flink merges HOP / CUMULATE slices and merged sessions' accumulators (and has no merge
    # for FIRST_VALUE / LAST_VALUE): the arrival-order aggregates run in TUMBLE windows only.
    ("SELECT k, STDDEV_POP(v) FROM t GROUP BY k, HOP(ts, INTERVAL '5' SECOND, "
     "INTERVAL '10' SECOND)", ["STDDEV_POP in a HOP window is not supported"]),
    ("SELECT LISTAGG(k) FROM TABLE(SESSION(TABLE t PARTITION BY k, DESCRIPTOR(ts), "
     "INTERVAL '1' MINUTE)) GROUP BY window_start, window_end",
     ["LISTAGG over a window TVF's rows"]),
    ("SELECT k, LISTAGG(k) FROM TABLE(SESSION(TABLE t PARTITION BY k, DESCRIPTOR(ts), "
     "INTERVAL '1' MINUTE)) GROUP BY k, window_start, window_end",
     ["LISTAGG in a SESSION window is not supported"]),
    (f"SELECT FIRST_VALUE(c) FROM ({AGG}) GROUP BY window_start, window_end",
     ["FIRST_VALUE in a window aggregate's result is not supported"]),
    ("SELECT k, LISTAGG(k) OVER (PARTITION BY k ORDER BY ts) FROM t",
     ["LISTAGG over an OVER window is not supported"]),
    ("SELECT k, VAR_POP(CAST(v AS DECIMAL(10, 2))) OVER (PARTITION BY k ORDER BY ts) FROM t",
     ["VAR_POP(..) OVER a DECIMAL(10, 2) argument is not supported"]),
    ("SELECT k, LISTAGG(v) FROM t GROUP BY k", ["LISTAGG needs a STRING argument, got INT"]),
    ("SELECT k, LISTAGG(k, k) FROM t GROUP BY k", ["separator must be a string literal"]),
    ("SELECT k, STDDEV_SAMP(DISTINCT v) FROM t GROUP BY k",
     ["STDDEV_SAMP(DISTINCT ...) is not supported"]),
])
def test_window_constructs_not_implemented_are_refused(spark, tmp_path, query, needles):
    (tmp_path / "ddl.sql").write_text(DDL)
    (tmp_path / "q.sql").write_text(query)
    (tmp_path / "t.csv").write_text("k,v,ts\na,1,2024-01-01 00:00:01\n")
    (tmp_path / "u.csv").write_text("k,w\na,1\n")
    with pytest.raises(SqlError) as e:
        run(RunSpec.bounded_run([tmp_path / "ddl.sql", tmp_path / "q.sql"],
                      {"t": tmp_path / "t.csv", "u": tmp_path / "u.csv"}, "batch",
                      tmp_path / "out"), spark)
    assert e.value.exit_code == 2
    for n in needles:
        assert n in str(e.value), str(e.value)


def test_window_join_residual_is_true_only_when_known():
    """The residual condition over candidate pairs in SQL's three-valued logic: a NULL operand
    makes a comparison unknown, NOT unknown stays unknown, FALSE AND unknown is FALSE, TRUE OR
    unknown is TRUE, and NULL <=> NULL is TRUE; only TRUE pairs match."""
    from operators_lib.plan import Cond
    from operators_lib.stream.calc import truth

    cols = {"x": np.array([1, None, 3, None], dtype=object),
            "y": np.array([1, 2, None, None], dtype=object),
            "f": np.array([True, False, None, True], dtype=object)}
    eq = Cond("=", ("x", "y"))
    cases = {
        eq: ([True, False, False, False], [True, False, False, False]),
        Cond("NOT", (eq,)): ([False, False, False, False], [True, False, False, False]),
        Cond("AND", (eq, Cond("COL", ("f",)))): ([True, False, False, False],
                                                  [True, True, False, False]),
        Cond("OR", (eq, Cond("COL", ("f",)))): ([True, False, False, True],
                                                 [True, False, False, True]),
        Cond("<=>", ("x", "y")): ([True, False, False, True], [True, True, True, True]),
    }
    for cond, (value, known) in cases.items():
        v, k = truth(cond, cols.__getitem__)
        assert (v & k).tolist() == [a and b for a, b in zip(value, known)], cond
        assert k.tolist() == known, cond


@pytest.mark.parametrize("aggregated", [False, True], ids=["tvf_rows", "aggregates"])
def test_two_source_window_join_reports_late_rows_of_their_table(spark, tmp_path, aggregated):
    """A window join over two tables, one row per micro-batch: a buys row behind a window that
    both watermarks have passed is late, listed in late.csv under its table, and parity
    recomputes batch without it. (Flink's two sources race, so no oracle changelog here.)"""
    case = next(c for c in CASES if c.id == "windows/window_join_tvf")
    (tmp_path / "clicks.csv").write_text(
        "user_id,url,ts\na,u1,2024-01-01 00:00:01\nb,u2,2024-01-01 00:00:12\n"
        "a,u3,2024-01-01 00:00:30\n")
    (tmp_path / "buys.csv").write_text(
        "user_id,amount,ts\na,5,2024-01-01 00:00:02\nb,7,2024-01-01 00:00:15\n"
        "a,9,2024-01-01 00:00:33\na,3,2024-01-01 00:00:04\n")
    tvf = "SELECT * FROM TABLE(TUMBLE(TABLE {t}, DESCRIPTOR(ts), INTERVAL '10' SECOND))"
    if aggregated:
        tvf = ("SELECT user_id, window_start, window_end, COUNT(*) AS n FROM "
               "TABLE(TUMBLE(TABLE {t}, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
               "GROUP BY user_id, window_start, window_end")
    (tmp_path / "q.sql").write_text(
        f"SELECT c.user_id, c.window_start, b.user_id AS buyer, "
        f"b.{'n' if aggregated else 'amount'} FROM ({tvf.format(t='clicks')}) c "
        f"FULL JOIN ({tvf.format(t='buys')}) b ON c.user_id = b.user_id AND "
        "c.window_start = b.window_start AND c.window_end = b.window_end")
    result = run(RunSpec.bounded_run([case.dir / "ddl.sql", tmp_path / "q.sql"],
                           {"clicks": tmp_path / "clicks.csv", "buys": tmp_path / "buys.csv"},
                           "both", tmp_path / "out", 1), spark, runtime=HarnessRuntime())
    assert result.exit_code == 0, result.message
    assert result.report.parity.verdict == "explained_by_late_rows"
    late = read_csv(tmp_path / "out" / "late.csv")
    assert late[1:] == [["buys", "a", "3", "2024-01-01 00:00:04.000", "3"]], late
