"""Incremental runs (the DAG's stream_increment and batch_parity steps, in-process; the DAG
around them: tests/test_dags.py): a later run retracts and updates what an earlier one emitted;
parity pairs each emitted window with its batch row, and leaves out what the stream left out."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pyspark.sql.classic.dataframe import DataFrame  # the class whose methods run

from operators_lib.errors import InputError, ParityError
from operators_lib.parity.compare import SAMPLE
from operators_lib.runs import binding
from operators_lib.runs.query_config import QueryConfig
from operators_lib.sql import script
from operators_lib.sql.script import script_of
from operators_lib.stream.layout import STATE_LAYOUT
from tests.scheduled import audit, backfill, batch_parity, stream_increment

REPO = Path(__file__).resolve().parents[1]
HOP = """SELECT window_start, window_end, url, COUNT(*) AS `views`
FROM TABLE(HOP(TABLE page_views, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '2' MINUTE))
GROUP BY window_start, window_end, url
"""

def _page_views_query(tmp_path: Path, sql: str, rows_per_batch: int) -> QueryConfig:
    """A scheduled query over examples/pageviews' table, reading tmp_path/incoming."""
    (tmp_path / "q.sql").write_text(sql)
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    return QueryConfig(name="q", sql=[REPO / "examples" / "pageviews" / "page_views.sql",
                                      tmp_path / "q.sql"],
                       inputs={"page_views": incoming}, expectations="page_views",
                       publish_format="csv",
                       rows_per_batch=rows_per_batch)


def _increment(cfg: QueryConfig, spark, tmp_path: Path, run: int, lines: list[str]
               ) -> tuple[list[str], dict]:
    """One scheduled run over a new file of ``lines``: its stream.csv rows and parity."""
    incoming = cfg.inputs["page_views"]
    (incoming / f"{run}.csv").write_text("\n".join(["user_id,url,ts", *lines]) + "\n")
    run_dir = tmp_path / f"run{run}"
    stream_increment(cfg, spark, tmp_path / "state", run_dir)
    rows = (run_dir / "stream.csv").read_text().splitlines()[1:]
    parity = batch_parity(cfg, spark, tmp_path / "state", run_dir)
    assert parity["verdict"] == "equal_for_emitted_rows", parity
    return rows, parity


def test_hop_windows_across_runs_keep_parity(spark, tmp_path):
    """HOP(1 min, 2 min), watermark ts - 5 s.

    run 1: 10:00:30 and 10:01:20, watermark 10:01:15: [09:59, 10:01) fires; [10:00, 10:02),
        whose first row (row 0) is also [09:59, 10:01)'s, waits: it must not be compared yet.
    run 2: 10:00:50 arrives after [09:59, 10:01) fired but before [10:00, 10:02): it counts in
        the second window only (LATE_WINDOW), and batch must leave out the same pair.
    """
    cfg = _page_views_query(tmp_path, HOP, 100)
    files = {1: ["u1,/home,2024-01-01 10:00:30", "u2,/home,2024-01-01 10:01:20"],
             2: ["u4,/home,2024-01-01 10:00:50", "u5,/home,2024-01-01 10:04:10"]}
    # An append-only result: each run publishes the windows that fired in it.
    published = {1: ["2024-01-01 09:59:00.000,2024-01-01 10:01:00.000,/home,1"],
                 2: ["2024-01-01 10:00:00.000,2024-01-01 10:02:00.000,/home,3",
                     "2024-01-01 10:01:00.000,2024-01-01 10:03:00.000,/home,1"]}
    # (windows emitted by the run, by all runs so far, pending, late rows, late pairs)
    counts = {1: (1, 1, 2, 0, 0), 2: (2, 3, 2, 0, 1)}
    for run, lines in files.items():
        rows, parity = _increment(cfg, spark, tmp_path, run, lines)
        assert rows == published[run]
        assert (parity["emitted_windows"], parity["emitted_windows_total"],
                parity["pending_windows"], parity["late_rows"],
                parity["late_row_windows"]) == counts[run]
    run_dir = tmp_path / "run2"
    assert json.loads((run_dir / "stream_report.json").read_text())["late_row_windows"] == 1
    # the audit: the three windows of both runs, each once, none left behind the watermark
    report = audit(cfg, spark, tmp_path / "state", tmp_path / "audit")
    assert (report["verdict"], report["emitted_windows"], report["only_in_stream"],
            report["unemitted_behind_watermark"]["rows"]) == ("equal_for_emitted_rows", 3, 0, 0)


def test_parity_of_a_later_run_reads_only_the_input_its_windows_reach(spark, tmp_path):
    """TUMBLE(1 min), watermark ts - 5 s, two rows per staged part. Run 1 (watermark 10:04:05)
    fires 10:00-10:03; run 2 fires 10:04 (a row of each run) and 10:05. Its windows start after
    10:04:05 - 1 min, so parity leaves out the two staged parts before 10:03:05 and still
    pairs every emitted window with its batch row."""
    cfg = _page_views_query(tmp_path, (
        "SELECT window_start, url, COUNT(*) AS `views` FROM TABLE(TUMBLE(TABLE page_views, "
        "DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, url"), 2)
    times = {1: ["10:00:10", "10:00:20", "10:01:10", "10:02:10", "10:03:10", "10:04:10"],
             2: ["10:04:50", "10:05:10", "10:06:10"]}
    published = {1: {"10:00,2", "10:01,1", "10:02,1", "10:03,1"}, 2: {"10:04,2", "10:05,1"}}
    scope = {1: (None, 3), 2: ("2024-01-01 10:03:05", 3)}  # (from event time, staged parts)
    for run, ts in times.items():
        rows, parity = _increment(cfg, spark, tmp_path, run, [f"u,/a,2024-01-01 {t}" for t in ts])
        assert {f"{r[11:16]},{r.rsplit(',', 1)[1]}" for r in rows} == published[run]
        assert (parity["parity_input"]["from_event_time"],
                parity["parity_input"]["staged_parts"]) == scope[run]
        assert parity["pending_windows"] == 1  # 10:04, then 10:06
    # A batch backfill of both intervals (operators_lib/runs/backfill.py): each holds the windows
    # whose first row arrived in it, complete (batch has no watermark): 10:04 in run 1.
    done = backfill(cfg, spark, tmp_path / "state", tmp_path / "backfill", "run1", "run2")
    assert done["intervals"] == {"run1": 5, "run2": 2}
    backfilled = {run: {f"{r[11:16]},{r.rsplit(',', 1)[1]}" for r in (
        tmp_path / "backfill" / run / "stream.csv").read_text().splitlines()[1:]}
        for run in ("run1", "run2")}
    assert backfilled == {"run1": published[1] | {"10:04,2"}, "run2": {"10:05,1", "10:06,1"}}


def test_parity_of_a_range_over_reaches_back_from_a_row_behind_the_watermark(spark, tmp_path):
    """COUNT(*) OVER RANGE 2 minutes per user. Run 1 ends with the watermark at 10:04:05, user
    b fired up to 10:01. Run 2 brings b's row at 10:02, behind the watermark but not late (b's
    partition has not fired past it): its frame reaches back to 10:00, so parity must read
    from there, not from 10:04:05 - 2 minutes."""
    cfg = _page_views_query(tmp_path, (
        "SELECT user_id, ts, COUNT(*) OVER (PARTITION BY user_id ORDER BY ts RANGE BETWEEN "
        "INTERVAL '2' MINUTE PRECEDING AND CURRENT ROW) AS n FROM page_views"), 2)
    rows = {1: ["b,10:00:00", "b,10:01:00", "a,10:02:00", "a,10:03:00", "a,10:04:00",
                "a,10:04:10"], 2: ["b,10:02:00", "a,10:06:00"]}
    published = {1: {"b,10:00:00,1", "b,10:01:00,2", "a,10:02:00,1", "a,10:03:00,2",
                     "a,10:04:00,3"}, 2: {"a,10:04:10,3", "b,10:02:00,3"}}
    for run, data in rows.items():
        out, parity = _increment(cfg, spark, tmp_path, run,
                                 [f"{r[0]},/a,2024-01-01 {r[2:]}" for r in data])
        assert {f"{r[:2]}{r[13:21]},{r.rsplit(',', 1)[1]}" for r in out} == published[run]
    assert parity["parity_input"]["from_event_time"] == "2024-01-01 10:00:00"


def test_join_and_group_by_retract_across_runs_in_parity(spark, tmp_path, monkeypatch):
    """LEFT JOIN + GROUP BY (examples/shop): the second run's orders and customers retract and
    update the first run's rows; every run is in parity with batch over all input so far. After
    an upgrade of twinflow that stores state in another layout, the next run rebuilds the state
    from the staged input instead of reading the old checkpoint."""
    shop = REPO / "examples" / "shop"
    inputs = {t: tmp_path / "incoming" / t for t in ("customers", "orders")}
    cfg = QueryConfig(name="shop", sql=[shop / "shop.sql", shop / "revenue_by_region.sql"],
                      inputs=inputs, expectations="revenue_by_region", publish_format="csv",
                      rows_per_batch=100)  # finals only: one micro-batch a run
    state = tmp_path / "state"
    # order 4 belongs to c9, who arrives in the second run: it waits in the join's state
    published = {10: {"north,2,2,15.00", "south,1,1,20.00", "east,1,0,0.00"},
                 11: {"north,2,3,18.25", "south,2,3,33.00", "east,2,1,7.00"}}
    for hour, rows in published.items():
        for t, folder in inputs.items():
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copy(shop / "incoming" / t / f"2024-01-01T{hour}.csv", folder)
        run_dir = tmp_path / f"run{hour}"
        stream_increment(cfg, spark, state, run_dir)
        assert set((run_dir / "stream.csv").read_text().splitlines()[1:]) == rows
        assert batch_parity(cfg, spark, state, run_dir)["verdict"] == "equal"
    # An updating result: each run publishes the whole result and its changes to it.
    changes = [line.split(",", 1) for line in
               (run_dir / "changes.csv").read_text().splitlines()[1:]]
    assert {r for op, r in changes if op in ("-U", "-D")} == published[10]
    assert {r for op, r in changes if op in ("+I", "+U")} == published[11]
    report = json.loads((run_dir / "stream_report.json").read_text())
    assert report["new_input_rows"] == {"customers": 2, "orders": 3}

    # The 10h run cleared and run again after 11h: the same result as its first run (nothing
    # staged or streamed), in parity with batch over the input staged by 10h.
    rerun = tmp_path / "run10"
    shutil.rmtree(rerun)
    report = stream_increment(cfg, spark, state, rerun)
    assert report["rerun"] and report["new_input_rows"] == {"customers": 4, "orders": 4}
    assert set((rerun / "stream.csv").read_text().splitlines()[1:]) == published[10]
    parity = batch_parity(cfg, spark, state, rerun)
    assert (parity["verdict"], parity["input_rows"]) == ("equal", 8)
    # An interval before the newest one that never ran cannot be streamed any more.
    with pytest.raises(InputError, match="comes before interval run11"):
        stream_increment(cfg, spark, state, tmp_path / "run09")
    # The audit checks the state as of the newest run (11h), not the re-run one.
    report = audit(cfg, spark, state, tmp_path / "audit")
    assert (report["verdict"], report["interval"], report["rows"]) == ("equal", "run11", 3)

    # The upgrade (stream/layout.py): run 12 (no new input) replays the 13 staged rows into a
    # new checkpoint; its result is the uninterrupted one, in parity.
    assert json.loads((state / "manifest.json").read_text())["state_layout"] == STATE_LAYOUT
    monkeypatch.setattr(binding, "STATE_LAYOUT", STATE_LAYOUT + ";next")
    # Until then nothing reads the old state with the new code.
    for step in (stream_increment, batch_parity):  # a re-run of run 11, its parity
        with pytest.raises(InputError, match="another state layout"):
            step(cfg, spark, state, tmp_path / "run11")
    report = stream_increment(cfg, spark, state, tmp_path / "run12")
    assert report["state_rebuilt"]["reason"] == "twinflow's state layout changed (an upgrade)"
    assert report["state_rebuilt"]["replayed_input_rows"] == 13
    assert (state / "retired" / "state_layout").read_text().strip() == STATE_LAYOUT
    assert set((tmp_path / "run12" / "stream.csv").read_text().splitlines()[1:]) == published[11]
    assert batch_parity(cfg, spark, state, tmp_path / "run12")["verdict"] == "equal"
    assert stream_increment(cfg, spark, state, tmp_path / "run13")["state_rebuilt"] is None

    # A new version of the query (one more aggregate): run 14 bootstraps its state from the
    # retained input, in parity; the old state is retired with the SQL it ran, not deleted.
    v2 = tmp_path / "revenue_v2.sql"
    v2.write_text((shop / "revenue_by_region.sql").read_text().replace(
        "AS revenue", "AS revenue, MAX(o.amount) AS biggest"))
    cfg.sql = [shop / "shop.sql", v2]
    report = stream_increment(cfg, spark, state, tmp_path / "run14")
    assert (report["state_rebuilt"]["reason"], report["state_rebuilt"]["replayed_input_rows"]) \
        == ("the query's SQL changed", 13)
    assert set((tmp_path / "run14" / "stream.csv").read_text().splitlines()) == {
        "region,customers,orders,revenue,biggest", "north,2,3,18.25,10.50",
        "south,2,3,33.00,20.00", "east,2,1,7.00,7.00"}
    assert batch_parity(cfg, spark, state, tmp_path / "run14")["verdict"] == "equal"
    retired = json.loads((state / "retired" / "query.json").read_text())
    assert [s["file"] for s in retired["sql"]] == ["shop.sql", "revenue_by_region.sql"]
    # A version whose table has other columns cannot reuse the staged input.
    ddl = tmp_path / "shop_v3.sql"
    ddl.write_text((shop / "shop.sql").read_text().replace("region STRING,", "region INT,"))
    cfg.sql = [ddl, v2]
    with pytest.raises(InputError, match="table customers with other columns"):
        stream_increment(cfg, spark, state, tmp_path / "run15")


def test_parity_of_a_later_run_compares_the_keys_it_touched(spark, tmp_path):
    """Keyed results (parity_scope.key_scope): a later run's parity is batch over the rows of
    the keys the run touched. GROUP BY url: run 2's new rows touch /a and the NULL url, so
    parity compares their two result rows (/b keeps its result); OVER PARTITION BY user_id:
    the keys of the rows run 2 emitted, only u1's (one pending since run 1, one new: u2's new
    row waits behind the watermark)."""
    (tmp_path / "g").mkdir()
    counts = _page_views_query(tmp_path / "g", "SELECT url, COUNT(*) AS n FROM page_views "
                               "GROUP BY url", 100)
    for run, lines in {1: ["u1,/a,2024-01-01 10:00:00", "u2,/b,2024-01-01 10:00:01"],
                       2: ["u3,/a,2024-01-01 10:00:02", "u4,,2024-01-01 10:00:03"]}.items():
        (counts.inputs["page_views"] / f"{run}.csv").write_text(
            "\n".join(["user_id,url,ts", *lines]) + "\n")
        run_dir = tmp_path / "g" / f"run{run}"
        stream_increment(counts, spark, tmp_path / "g" / "state", run_dir)
        parity = batch_parity(counts, spark, tmp_path / "g" / "state", run_dir)
    assert (parity["verdict"], parity["rows"], parity["parity_input"]) == (
        "equal", 2, {"touched_keys": 2, "key": ["url"]})
    assert sorted((run_dir / "batch.csv").read_text().splitlines()) == [",1", "/a,2", "url,n"]
    assert len((run_dir / "stream.csv").read_text().splitlines()) == 4  # the whole result

    (tmp_path / "o").mkdir()
    over = _page_views_query(tmp_path / "o", "SELECT user_id, ts, COUNT(*) OVER (PARTITION BY "
                             "user_id ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) "
                             "AS n FROM page_views", 100)
    _increment(over, spark, tmp_path / "o", 1, [
        "u1,/a,2024-01-01 10:00:00", "u2,/a,2024-01-01 10:00:30", "u3,/a,2024-01-01 10:00:40",
        "u1,/a,2024-01-01 10:00:50"])  # watermark 10:00:45: u1's second row waits
    rows, parity = _increment(over, spark, tmp_path / "o", 2, [
        "u1,/a,2024-01-01 10:01:00", "u2,/a,2024-01-01 10:01:30"])  # watermark 10:01:25
    assert sorted(rows) == ["u1,2024-01-01 10:00:50.000,2", "u1,2024-01-01 10:01:00.000,2"]
    assert (parity["emitted_rows"], parity["parity_input"]["touched_keys"]) == (2, 1)


def test_a_file_with_a_wrong_header_fails_the_run_before_anything_is_staged(spark, tmp_path):
    """Under the DAG this fails stream_increment, and so the run (tests/test_dags.py shows a
    failed step publishing nothing); without the file the next run stages the good one once."""
    seed = REPO / "examples" / "seed"
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    shutil.copy(seed / "incoming" / "tmall_item" / "2017-11-11T10.csv", incoming)
    (incoming / "bad.csv").write_text("itemID,kind,onSellTime,price\nX,Y,2017-11-11 10:04:00,1\n")
    cfg = QueryConfig(name="seed", sql=[seed / "tmall_item.sql", seed / "rows_max_price.sql"],
                      inputs={"tmall_item": incoming}, expectations="tmall_max_price",
                      publish_format="csv",
                      rows_per_batch=100)
    state = tmp_path / "state"
    with pytest.raises(InputError, match="itemID"):
        stream_increment(cfg, spark, state, tmp_path / "run1")
    (incoming / "bad.csv").unlink()
    stream_increment(cfg, spark, state, tmp_path / "run2")
    report = json.loads((tmp_path / "run2" / "stream_report.json").read_text())
    assert report["new_input_rows"] == {"tmall_item": 4}


def test_a_scheduled_run_parses_its_sql_once(spark, tmp_path, monkeypatch):
    """The script the spec's check parsed is the one the run plans (runs/lifecycle.plan_for
    takes it)."""
    parsed = []

    def counted(sources, dirs=None):
        parsed.append([name for name, _ in sources])
        return script_of(sources, dirs)

    monkeypatch.setattr(script, "script_of", counted)  # what load_script parses with
    cfg = _page_views_query(tmp_path, "SELECT user_id, url FROM page_views", 100)
    (cfg.inputs["page_views"] / "1.csv").write_text("user_id,url,ts\nu1,/a,2024-01-01 10:00:00\n")
    stream_increment(cfg, spark, tmp_path / "state", tmp_path / "run1")
    assert batch_parity(cfg, spark, tmp_path / "state", tmp_path / "run1")["verdict"] == "equal"
    assert parsed == [["page_views.sql", "q.sql"]] * 2  # the stream run's and the parity's


def test_a_scheduled_run_brings_no_rows_to_the_driver(spark, tmp_path, monkeypatch):
    """The executors do the row work: the stream's sink, the outputs and parity (append-only
    and updating results) never pull a result into the driver; the driver sees counts and at
    most a sample of 10 rows."""
    def refused(name: str):
        def call(self, *args, **kwargs):
            raise AssertionError(f"DataFrame.{name} on the driver")
        return call

    for name in ("toArrow", "toPandas", "toLocalIterator"):
        monkeypatch.setattr(DataFrame, name, refused(name))
    collect = DataFrame.collect

    def small_collect(self):
        rows = collect(self)
        assert len(rows) <= SAMPLE, f"{len(rows)} rows collected to the driver"
        return rows

    monkeypatch.setattr(DataFrame, "collect", small_collect)
    (tmp_path / "hop").mkdir()
    views = _page_views_query(tmp_path / "hop", HOP, 3)
    rows, parity = _increment(views, spark, tmp_path / "hop", 1, [
        f"u{k},/p{k % 13},2024-01-01 10:{k:02d}:00" for k in range(40)])
    # one row a minute, each (window, url) one row: windows ending by the watermark 10:38:55
    # fire, [k-1, k+1) for rows 0..37 and [k, k+2) for rows 0..36
    assert len(rows) == 75 and parity["emitted_windows"] == 75

    shop = REPO / "examples" / "shop"
    inputs = {t: tmp_path / "incoming" / t for t in ("customers", "orders")}
    for t, folder in inputs.items():
        shutil.copytree(shop / "incoming" / t, folder)
    cfg = QueryConfig(name="shop", sql=[shop / "shop.sql", shop / "revenue_by_region.sql"],
                      inputs=inputs, expectations="revenue_by_region",
                      publish_format="csv", rows_per_batch=2)
    stream_increment(cfg, spark, tmp_path / "state", tmp_path / "run")
    assert batch_parity(cfg, spark, tmp_path / "state", tmp_path / "run")["verdict"] == "equal"


def test_the_audit_finds_a_row_no_run_emitted_and_a_row_emitted_twice(spark, tmp_path):
    """MAX OVER ROWS 1 per user over two runs: each run's parity passes. The audit compares
    everything emitted with batch over all input; it passes, then fails once a row behind the
    watermark is missing from the changelog (a lost row, which no run's parity sees) and once
    a row is there twice."""
    cfg = _page_views_query(tmp_path, (
        "SELECT user_id, ts, COUNT(*) OVER (PARTITION BY user_id ORDER BY ts ROWS BETWEEN 1 "
        "PRECEDING AND CURRENT ROW) AS n FROM page_views"), 2)
    for run in (1, 2):
        _increment(cfg, spark, tmp_path, run, [
            f"u{k % 3},/a,2024-01-01 1{run}:{k:02d}:00" for k in range(12)])
    state = tmp_path / "state"
    report = audit(cfg, spark, state, tmp_path / "audit")
    # all 24 rows but 12:11, past the watermark 12:10:55 (delay 5 s)
    assert (report["verdict"], report["emitted_rows"], report["only_in_batch"],
            report["only_in_stream"], report["unemitted_behind_watermark"]["rows"]) == (
        "equal_for_emitted_rows", 23, 0, 0, 0)
    assert json.loads((tmp_path / "audit" / "audit.json").read_text()) == report

    part = next(p for p in sorted((state / "changelog").glob("batch-*/part-*.parquet"))
                if pq.read_metadata(p).num_rows)
    rows = pq.read_table(part)
    part.with_name(f".{part.name}.crc").unlink()  # Spark's checksum of the file we rewrite
    as_spark = {"use_deprecated_int96_timestamps": True}  # how Spark writes a TIMESTAMP_LTZ
    pq.write_table(rows.slice(1), part, **as_spark)  # the first row of a micro-batch is lost
    with pytest.raises(ParityError, match=r"1 row\(s\) behind the watermark never emitted"):
        audit(cfg, spark, state, tmp_path / "audit")
    pq.write_table(rows, part, **as_spark)
    pq.write_table(rows, part.with_name("part-99999-copy.parquet"), **as_spark)  # rows twice
    with pytest.raises(ParityError, match=r"'only_in_stream': [1-9]"):
        audit(cfg, spark, state, tmp_path / "audit")


@pytest.mark.parametrize("query, scope", [
    ("SELECT o.cust_id AS who, o.amount, c.name FROM orders o LEFT JOIN customers c "
     "ON o.cust_id = c.cust_id", ({"orders": ("cust_id",), "customers": ("cust_id",)},
                                  ("who",))),
    ("SELECT region, COUNT(*) AS n FROM customers GROUP BY region HAVING COUNT(*) > 1",
     ({"customers": ("region",)}, ("region",))),
    ("SELECT * FROM (SELECT cust_id AS c, amount, ROW_NUMBER() OVER (PARTITION BY cust_id "
     "ORDER BY amount DESC) AS rn FROM orders) WHERE rn <= 2",
     ({"orders": ("cust_id",)}, ("c",))),
    # not keyed so: a key computed, not shown, a LEFT join showing the right key (NULL when
    # padded), a RIGHT join, a self-join, an aggregate of a join
    ("SELECT c.cust_id, o.amount FROM orders o LEFT JOIN customers c ON o.cust_id = c.cust_id",
     None),
    ("SELECT UPPER(region) AS r, COUNT(*) AS n FROM customers GROUP BY UPPER(region)", None),
    ("SELECT COUNT(*) AS n FROM customers GROUP BY region", None),
    ("SELECT o.amount, c.name FROM orders o RIGHT JOIN customers c ON o.cust_id = c.cust_id",
     None),
    ("SELECT a.order_id FROM orders a JOIN orders b ON a.cust_id = b.cust_id", None),
    ("SELECT c.region, COUNT(*) AS n FROM orders o JOIN customers c ON o.cust_id = c.cust_id "
     "GROUP BY c.region", None),
])
def test_which_results_are_keyed_by_input_columns(spark, tmp_path, query, scope):
    from operators_lib.parity.scope import KeyScope, key_scope
    from operators_lib.sql import load_script
    from operators_lib.sql.planner import compile_query

    (tmp_path / "q.sql").write_text(query)
    plan = compile_query(load_script([REPO / "examples" / "shop" / "shop.sql",
                                      tmp_path / "q.sql"]), spark)
    assert key_scope(plan) == (scope and KeyScope(*scope))


def test_a_query_ordered_by_processing_time_is_not_compared_in_scheduled_runs(spark, tmp_path):
    """Its result depends on when rows arrive: a scheduled run's parity and the audit say so
    (as ``twinflow run`` does), rather than compare it with batch and fail the run."""
    case = REPO / "tests" / "cases" / "over" / "proctime_rows_count"
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    cfg = QueryConfig(name="q", sql=[case / "ddl.sql", case / "query.sql"],
                      inputs={"visits": incoming}, expectations="visits",
                      publish_format="csv", rows_per_batch=2)
    for run, lines in enumerate((["a,1", "b,2", "a,3"], ["a,4", "b,5"]), 1):
        (incoming / f"{run}.csv").write_text("\n".join(["page,ms", *lines]) + "\n")
        stream_increment(cfg, spark, tmp_path / "state", tmp_path / f"run{run}")
        parity = batch_parity(cfg, spark, tmp_path / "state", tmp_path / f"run{run}")
        assert parity == {"verdict": "not_applicable", "reason": "the query orders by "
                          "processing time, which differs between runs by definition"}
        assert len((tmp_path / f"run{run}" / "stream.csv").read_text().splitlines()) == \
            1 + len(lines)
    assert audit(cfg, spark, tmp_path / "state", tmp_path / "audit")["verdict"] == \
        "not_applicable"
