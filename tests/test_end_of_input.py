"""The end of input announced in the last staged part (plan.END_FIRST, plan.ends_in_last_part):
the operator fires everything in the micro-batch that reads the last row, and the changelog is
the one the end-of-input marker gives as a micro-batch of its own (which the corpus checks
against Flink), row for row."""

from __future__ import annotations

import random

import pyarrow.parquet as pq
import pytest

from operators_lib.plan import END_FIRST, ROWNUM, ends_in_last_part
from operators_lib.runs import staging
from operators_lib.runs.lifecycle import run
from operators_lib.runs.spec import RunSpec, Steps
from operators_lib.sql import load_script
from operators_lib.sql.planner import compile_query
from operators_lib.stream.rows import BUCKETS
from operators_lib.stream.runner import batch_dir
from tests.harness import HarnessRuntime

DDL = """CREATE TABLE pings (
  host STRING,
  ms INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
);
"""
# Bounded frames accept a row behind the watermark when its key has not fired past it: at the
# end such a row must still leave after the rows its micro-batch fired at the watermark.
OVER = """SELECT host, ms, ts,
  SUM(ms) OVER (PARTITION BY host ORDER BY ts {}) AS s,
  MAX(ms) OVER (PARTITION BY host ORDER BY ts {}) AS m
FROM pings
WHERE ms <> 7
"""
ROWS = OVER.format(*["ROWS BETWEEN 1 PRECEDING AND CURRENT ROW"] * 2)
RANGE = OVER.format(*["RANGE BETWEEN INTERVAL '3' SECOND PRECEDING AND CURRENT ROW"] * 2)
TUMBLE = """SELECT host, TUMBLE_START(ts, INTERVAL '5' SECOND) AS ws, COUNT(*) AS n, SUM(ms) AS s
FROM pings WHERE ms <> 7 GROUP BY host, TUMBLE(ts, INTERVAL '5' SECOND)
"""
HOP = """SELECT host, window_start, window_end, MAX(ms) AS m
FROM TABLE(HOP(TABLE pings, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '6' SECOND))
GROUP BY host, window_start, window_end
"""
SESSION = """SELECT host, SESSION_START(ts, INTERVAL '3' SECOND) AS ws,
  SESSION_END(ts, INTERVAL '3' SECOND) AS we, COUNT(*) AS n
FROM pings GROUP BY host, SESSION(ts, INTERVAL '3' SECOND)
"""

# The last micro-batch (one row each) fires h1 @ 06 at the watermark (10) and accepts h3 @ 01,
# far behind it (h3 never fired); at the end h3 @ 01 leaves after h1 @ 06, then h1 @ 12.
BEHIND = ["h1,6,2024-07-01 10:00:06", "h1,8,2024-07-01 10:00:12", "h3,5,2024-07-01 10:00:01"]


def _random_rows(seed: int) -> list[str]:
    rng = random.Random(seed)
    rows, t = [], 0
    for _ in range(60):
        t += rng.randint(-4, 4)  # out of order: some rows late, some behind the watermark
        rows.append(f"h{rng.randint(1, 4)},{rng.randint(0, 9)},"
                    f"2024-07-01 10:{10 + t // 60:02d}:{t % 60:02d}")
    return rows


def _write_case(tmp_path, rows: list[str], query: str) -> None:
    (tmp_path / "ddl.sql").write_text(DDL)
    (tmp_path / "query.sql").write_text(query)
    (tmp_path / "pings.csv").write_text("\n".join(["host,ms,ts", *rows]) + "\n")


def _run(spark, tmp_path, out: str, rows_per_batch: int):
    spec = RunSpec.bounded_run([tmp_path / "ddl.sql", tmp_path / "query.sql"],
                               {"pings": tmp_path / "pings.csv"}, "stream", tmp_path / out,
                               rows_per_batch)
    result = run(spec, spark, Steps.RUN, runtime=HarnessRuntime())
    assert result.exit_code == 0, result.message
    return result.report


@pytest.mark.parametrize("rows, rows_per_batch, query", [
    (BEHIND, 1, ROWS), (_random_rows(1), 7, ROWS), (_random_rows(2), 1, RANGE),
    (_random_rows(3), 60, ROWS), (_random_rows(4), 5, RANGE), (_random_rows(5), 3, TUMBLE),
    (_random_rows(6), 1, HOP), (_random_rows(7), 4, SESSION)],
    ids=["behind", "rows", "range", "one_batch", "range_5", "tumble", "hop", "session"])
def test_end_in_the_last_part_gives_the_changelog_of_an_end_of_its_own(
        spark, tmp_path, monkeypatch, rows, rows_per_batch, query):
    _write_case(tmp_path, rows, query)
    ends = _run(spark, tmp_path, "ends", rows_per_batch)
    monkeypatch.setattr(staging, "ends_in_last_part", lambda plan: False)
    own = _run(spark, tmp_path, "own", rows_per_batch)
    assert (tmp_path / "ends" / "changelog.csv").read_text() == \
        (tmp_path / "own" / "changelog.csv").read_text()
    assert ends.late_rows == own.late_rows
    # Late rows but where nothing can be late (BEHIND; one micro-batch).
    assert own.late_rows > 0 or rows is BEHIND or rows_per_batch == 60

    staged = sorted((tmp_path / "ends" / "_state" / "staged" / "pings").glob("part-*.parquet"))
    markers = [pq.read_table(p, columns=[ROWNUM])[ROWNUM].to_numpy() for p in staged]
    assert (markers[-1] <= END_FIRST).sum() == BUCKETS
    assert all((m >= 0).all() for m in markers[:-1])
    # The end's own micro-batch (eof.parquet) fires nothing: the last part's did it all; and
    # no micro-batch follows it (the watermark had passed everything already).
    parts = len(staged)
    assert ends.stream.micro_batches_this_run == parts + 1
    assert own.stream.micro_batches_this_run == parts + 2
    eof = batch_dir(tmp_path / "ends" / "_state" / "changelog", parts)
    assert sum(pq.read_table(f).num_rows for f in eof.glob("*.parquet")) == 0


def test_only_one_event_time_operator_over_one_table_ends_in_its_last_part(spark, tmp_path):
    def plan(query: str, ddl: str = DDL):
        (tmp_path / "ddl.sql").write_text(ddl)
        (tmp_path / "q.sql").write_text(query)
        return compile_query(load_script([tmp_path / "ddl.sql", tmp_path / "q.sql"]), spark)

    assert all(ends_in_last_part(plan(q)) for q in (ROWS, RANGE, TUMBLE, HOP, SESSION))
    over = "SUM(ms) OVER (PARTITION BY host ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)"
    # Two stateful operators: the second would see rows the first fired after its own end.
    assert not ends_in_last_part(plan(
        f"SELECT * FROM (SELECT host, ROW_NUMBER() OVER (PARTITION BY host ORDER BY s DESC) "
        f"AS r FROM (SELECT host, {over} AS s FROM pings)) WHERE r <= 2"))
    assert not ends_in_last_part(plan(
        "SELECT TUMBLE_START(wt, INTERVAL '10' SECOND) AS w, SUM(n) AS n FROM (SELECT host, "
        "TUMBLE_ROWTIME(ts, INTERVAL '5' SECOND) AS wt, COUNT(*) AS n FROM pings "
        "GROUP BY host, TUMBLE(ts, INTERVAL '5' SECOND)) "
        "GROUP BY TUMBLE(wt, INTERVAL '10' SECOND)"))
    # Two tables (a table read twice): one input's end is not the query's.
    assert not ends_in_last_part(plan(
        f"SELECT host, {over} AS s FROM pings UNION ALL SELECT host, ms AS s FROM pings"))
    assert not ends_in_last_part(plan("SELECT host, COUNT(*) AS n FROM pings GROUP BY host"))
    proctime = DDL.replace("ts TIMESTAMP(3),", "ts TIMESTAMP(3), pt AS PROCTIME(),")
    assert not ends_in_last_part(plan(f"SELECT host, {over.replace('ts', 'pt')} FROM pings",
                                      proctime))
    assert not ends_in_last_part(plan(
        "SELECT host, COUNT(*) AS n FROM pings GROUP BY host, TUMBLE(pt, INTERVAL '5' SECOND)",
        proctime))
