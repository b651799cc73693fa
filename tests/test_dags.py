"""The query DAG end to end with ``dag.test()``: the job of each Spark step, a real GX gate.

A passing run publishes; a second run with new input processes only that input and stays in
parity; a run whose output breaks its suite fails and publishes nothing.

The Spark steps of these runs execute the spark-submit job's ``main`` (jobs/twinflow_job.py,
with the step's rendered arguments) in this process, on the test session (``spark_steps``): a
spark-submit would start a cold JVM and import twinflow and GX again for each step, the
largest cost of these tests. What only spark-submit shows runs elsewhere: its driver options
(below), a real scheduler's runs (tests/test_state_dags.py), a cluster (tests/test_cluster.py).
"""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest

from operators_lib.ops import history
from operators_lib.ops.quality import register_suite
from operators_lib.ops.report import render
from operators_lib.plan import OP, ROWNUM
from tests.cluster import INTERPRETED

REPO = Path(__file__).resolve().parents[1]
SEED = REPO / "examples" / "seed"


def _config(tmp: Path, suite: str) -> Path:
    incoming = tmp / "incoming"
    incoming.mkdir()
    # A 1 minute watermark delay, so that some rows wait for the next run.
    ddl = tmp / "tmall_item.sql"
    ddl.write_text((SEED / "tmall_item.sql").read_text().replace(
        "AS onSellTime\n", "AS onSellTime - INTERVAL '1' MINUTE\n"))
    cfg = {"name": f"q_{suite}", "sql": [str(ddl), str(SEED / "rows_max_price.sql")],
           "inputs": {"tmall_item": str(incoming)}, "expectations": suite,
           "rows_per_batch": 2, "one_row_per_input_row": True, "retries": 0,
           "publish_format": "csv",
           "spark_conf": INTERPRETED}
    path = tmp / "queries" / f"q_{suite}.json"
    path.parent.mkdir()
    path.write_text(json.dumps(cfg))
    return path


@pytest.fixture
def spark_steps(spark, monkeypatch):
    """Each SparkSubmitOperator of a DAG runs its job's main() here, with its rendered
    arguments; a non-zero exit fails the task as spark-submit's would."""
    from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
    from airflow.sdk.exceptions import AirflowException

    from jobs.twinflow_job import main

    def execute(self, context) -> None:
        code = main([str(a) for a in self.application_args])
        if code:
            raise AirflowException(f"{self.task_id}: twinflow_job exited with {code}")

    monkeypatch.setattr(SparkSubmitOperator, "execute", execute)


def _run(airflow_env, config: Path, hour: int):
    from dags.twinflow_queries import build_dag

    # dag.test() syncs the DAGs folder to the metadata DB: let it see this test's config.
    airflow_env.setenv("TWINFLOW_QUERIES", str(config.parent))
    dag = build_dag(config)
    return dag.test(logical_date=datetime(2024, 1, 1, hour, tzinfo=UTC))


def test_dagbag_imports_the_query_dags(airflow_env):
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(REPO / "dags"))
    assert not bag.import_errors, bag.import_errors
    dag = bag.get_dag("twinflow_tmall_max_price")
    assert dag is not None
    assert set(dag.task_ids) == {
        "ship_code", "stream_and_parity", "validate", "publish", "report"}
    assert set(bag.get_dag("twinflow_reports").task_ids) == {"render"}
    hotspot = bag.get_dag("twinflow_hotspot_top_shops")  # top_shops.json has a hotspot section
    assert hotspot is not None
    assert set(hotspot.task_ids) == {"ship_code", "measure_skew", "choose_split"}
    assert bag.get_dag("twinflow_hotspot_tmall_max_price") is None
    assert set(bag.get_dag("twinflow_audit_tmall_max_price").task_ids) == {"ship_code", "audit"}
    # The state lifecycle (tests/test_state_dags.py runs them).
    for dag_id, tasks in (("checkpoints", {"snapshot", "ship_code", "verify", "prune"}),
                          ("rollback", {"rollback"}),
                          ("compact", {"ship_code", "compact", "compacted", "audit"}),
                          ("backfill", {"ship_code", "backfill", "gate_and_publish"})):
        assert set(bag.get_dag(f"twinflow_{dag_id}_top_shops").task_ids) == tasks
    # Each DAG of a query shows that query's ops report (the plugin's tab): its id names it.
    from jobs.ops_reports import query_of

    configs = {p.stem for p in (REPO / "dags" / "queries").glob("*.json")}
    ours = [d for d in bag.dag_ids if d != "twinflow_reports"]
    assert ours and all(query_of(d, configs) in configs for d in ours), ours


def _task_states(run) -> dict[str, str]:
    return {ti.task_id: ti.state for ti in run.get_task_instances()}


def _latest(home: Path, query: str) -> Path:
    published = home / "published" / query
    return published / (published / "LATEST").read_text().strip()


# The seed's rows_max_price (MAX(price) over the current and 2 preceding rows of the same type)
# over both seed files, by its definition; with a 1 minute watermark delay ITEM008 (10:08) waits.
SEED_RESULT = {"ITEM001,Electronic,2017-11-11 10:01:00.000,20.0,20.0",
               "ITEM002,Electronic,2017-11-11 10:02:00.000,50.0,50.0",
               "ITEM003,Electronic,2017-11-11 10:03:00.000,30.0,50.0",
               "ITEM004,Electronic,2017-11-11 10:03:00.000,60.0,60.0",
               "ITEM005,Electronic,2017-11-11 10:05:00.000,40.0,60.0",
               "ITEM006,Electronic,2017-11-11 10:06:00.000,20.0,60.0",
               "ITEM007,Electronic,2017-11-11 10:07:00.000,70.0,70.0"}
MALFORMED = ("ITEM10,Electronic,2017-11-11 10:04:00,abc\n"
             "ITEM11,Electronic,2017-11-11 25:04:00,10\n"
             "ITEM12,Electronic,2017-11-11 10:04:00\n"
             "ITEM13,Electronic,,10\n"
             "ITEM14,Electronic,2017-11-11 10:04:00,1e\n"
             "ITEM15,Electronic,2017-11-11 10:04:00,10,10\n")


def _result(run, task_id: str):
    """What a task of a ``dag.test()`` run returned (its XCom)."""
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    with create_session() as session:
        return XComModel.deserialize_value(session.query(XComModel).filter_by(
            dag_id=run.dag_id, run_id=run.run_id, task_id=task_id, key="return_value").one())


def told(context) -> None:
    """A query config's ``on_failure`` (test_a_query_across_failed_and_passing_runs): each
    failed task's id, a line in $TWINFLOW_HOME/told."""
    with open(Path(os.environ["TWINFLOW_HOME"]) / "told", "a") as fh:
        fh.write(context["ti"].task_id + "\n")


def test_a_query_across_failed_and_passing_runs(airflow_env, tmp_path, spark_steps):
    """One query's life under the DAG, each run keyed by its hour:

    11h the first file is staged and published (rows behind the watermark wait; a file with a
        wrong header failing a run before anything is staged: tests/test_incremental_runs.py);
    12h 6 malformed rows beside 4 good ones fail the run: nothing staged, the rows listed;
    13h with max_rejected_rows = 6 they are staged (only the new file is read) and the
        result is in parity with batch, but it breaks a stricter suite: the run fails at the
        gate and publishes nothing.
    (An interval cleared and run again: tests/test_incremental_runs.py.)
    """
    config = _config(tmp_path, "tmall_max_price")
    gx_root = tmp_path / "expectations"
    shutil.copytree(REPO / "expectations" / "gx", gx_root / "gx",
                    ignore=shutil.ignore_patterns("uncommitted"))
    suite = json.loads((gx_root / "gx" / "expectations" / "tmall_max_price.json").read_text())
    suite.pop("id")
    suite["name"] = "tmall_strict"
    suite["expectations"] = [{k: v for k, v in e.items() if k != "id"}
                             for e in suite["expectations"]]
    suite["expectations"].append({"type": "expect_column_values_to_be_between",
                                  "kwargs": {"column": "maxPrice", "max_value": 40}})
    airflow_env.setenv("TWINFLOW_GX_ROOT", str(gx_root))
    register_suite(suite, gx_root)
    cfg = json.loads(config.read_text()) | {"on_failure": "tests.test_dags:told"}
    config.write_text(json.dumps(cfg))
    home = Path(airflow_env["TWINFLOW_HOME"])
    runs = home / "runs" / "q_tmall_max_price"
    incoming = tmp_path / "incoming"
    seed = SEED / "incoming" / "tmall_item"

    shutil.copy(seed / "2017-11-11T10.csv", incoming)
    run = _run(airflow_env, config, 11)
    assert run.state == "success", _task_states(run)
    first = _latest(home, "q_tmall_max_price")
    assert json.loads((first / "stream_report.json").read_text())["new_input_rows"] == {
        "tmall_item": 4}
    parity = json.loads((first / "parity.json").read_text())
    # the watermark is 10:02, so ITEM003/ITEM004 (10:03) wait; none late
    assert parity["verdict"] == "equal_for_emitted_rows"
    assert (parity["input_rows"], parity["emitted_rows"], parity["late_rows"]) == (4, 2, 0)
    # The run's last task: its numbers (also sent as Airflow metrics) and its ops report.
    numbers = _result(run, "report")
    assert (numbers["run"], numbers["input_rows"], numbers["parity"]) == (
        "20240101T110000", 4, "equal_for_emitted_rows")
    page = home / "reports" / "q_tmall_max_price.html"
    assert numbers["report"] == str(page) and "20240101T110000" in page.read_text()

    (incoming / "mixed.csv").write_text((seed / "2017-11-11T11.csv").read_text() + MALFORMED)
    run = _run(airflow_env, config, 12)
    assert run.state == "failed"
    assert _task_states(run)["stream_and_parity"] == "failed"
    assert (home / "told").read_text() == "stream_and_parity\n"  # the config's on_failure
    assert len((runs / "20240101T120000").joinpath("rejected.csv").read_text()
               .splitlines()) == 1 + 6
    assert _latest(home, "q_tmall_max_price") == first

    config.write_text(json.dumps(cfg | {"max_rejected_rows": 6, "expectations": "tmall_strict"}))
    run = _run(airflow_env, config, 13)
    assert run.state == "failed"
    states = _task_states(run)
    assert (states["stream_and_parity"], states["validate"]) == ("success", "failed")
    assert states["publish"] != "success" and states["report"] != "success"
    assert (home / "told").read_text().splitlines()[1:] == ["validate"]
    assert _latest(home, "q_tmall_max_price") == first
    gated = runs / "20240101T130000"
    validation = json.loads((gated / "validation.json").read_text())
    assert validation["failed"][0]["kwargs"]["column"] == "maxPrice"
    report = json.loads((gated / "stream_report.json").read_text())
    assert (report["new_input_rows"], report["rejected_rows"]) == ({"tmall_item": 4}, 6)
    assert len((gated / "rejected.csv").read_text().splitlines()) == 1 + 6

    parity = json.loads((gated / "parity.json").read_text())
    assert parity["verdict"] == "equal_for_emitted_rows"
    # the watermark is 10:07: ITEM008 (10:08) waits; 5 rows more than 11h's 2 are out
    assert (parity["input_rows"], parity["emitted_rows"], parity["emitted_rows_total"],
            parity["late_rows"], parity["pending_rows"]) == (8, 5, 7, 0, 1)
    # An append-only result: each interval holds the rows emitted in it.
    rows = [*(first / "stream.csv").read_text().splitlines()[1:],
            *(gated / "stream.csv").read_text().splitlines()[1:]]
    assert len(rows) == len(SEED_RESULT) and set(rows) == SEED_RESULT

    # The query's history (operators_lib/ops/history.py): each interval's numbers and outcomes.
    hist = history.history(home / "state" / "q_tmall_max_price")
    runs = hist["runs"].set_index("run")
    assert runs.loc["20240101T110000", ["kind", "input_rows", "parity", "gate"]].tolist() == [
        "scheduled", 4, "equal_for_emitted_rows", "passed"]
    assert runs.loc["20240101T130000", ["rejected_rows", "parity", "gate"]].tolist() == [
        6, "equal_for_emitted_rows", "failed"]
    assert "20240101T120000" not in runs.index  # failed before its stream step
    # The table's own watermark: its latest event time (10:03, then 10:08) less 1 minute.
    tables = hist["tables"].set_index("run")
    assert tables.loc["20240101T110000", ["table", "input_rows", "watermark"]].tolist() == [
        "tmall_item", 4, "2017-11-11T10:02:00+00:00"]
    assert tables.loc["20240101T130000", "watermark"] == "2017-11-11T10:07:00+00:00"
    assert tables["oldest_input_age_s"].notna().all()  # how long the new file waited
    assert set(hist["micro_batches"]["run"]) == {"20240101T110000", "20240101T130000"}
    # Each gate's validation is a page of the Data Docs, which the ops report links.
    docs = home / "gx" / "data_docs"
    assert len(list((docs / "validations").rglob("*.html"))) == 2  # 11h, 13h (failed)
    drawn = render(home / "state" / "q_tmall_max_price", tmp_path / "report.html")
    assert drawn["data_docs"] == (docs / "index.html").as_uri()
    assert drawn["data_docs"] in (tmp_path / "report.html").read_text()

    # Each publish is an event of the query's Asset, with the run's numbers: 11h only. (The
    # Airflow database is the test session's: other tests' DAG runs publish under their homes.)
    from airflow.models.asset import AssetEvent, AssetModel
    from airflow.utils.session import create_session

    with create_session() as session:
        events = [e.extra for e in session.query(AssetEvent)
                  .join(AssetModel, AssetEvent.asset_id == AssetModel.id)
                  .filter(AssetModel.name == "twinflow_q_tmall_max_price")
                  .order_by(AssetEvent.id)]
    assert [(e["interval"], e["rows"], e["parity"], e["rerun"]) for e in events
            if e["path"].startswith(str(home))] == [
        ("20240101T110000", 2, "equal_for_emitted_rows", False)]


def test_publishing_an_earlier_interval_again_keeps_latest_on_the_newest(airflow_env, tmp_path):
    from jobs.gates import publish
    from operators_lib.runs.query_config import QueryConfig

    cfg = QueryConfig(name="q", sql=[], inputs={}, expectations="suite")
    for key, rows in (("20240101T110000", "b"), ("20240101T100000", "a")):
        run = tmp_path / key
        run.mkdir()
        (run / "stream.csv").write_text(f"x\n{rows}\n")
        publish(cfg, run, key)
    home = Path(airflow_env["TWINFLOW_HOME"])
    assert _latest(home, "q").name == "20240101T110000"
    assert (home / "published" / "q" / "20240101T100000" / "stream.csv").read_text() == "x\na\n"


def _published_rows(home: Path, query: str) -> set[str]:
    return set((_latest(home, query) / "stream.csv").read_text().splitlines()[1:])


def _topn_config(tmp: Path) -> Path:
    example = REPO / "examples" / "topn"
    cfg = json.loads((REPO / "dags" / "queries" / "top_shops.json").read_text())
    cfg.update(name="q_top", sql=[str(example / "shop_sales.sql"), str(example / "top_shops.sql")],
               inputs={"shop_sales": str(tmp / "incoming")}, retries=0, publish_format="csv",
               rows_per_batch=100,  # finals only: one micro-batch a run
               spark_conf=INTERPRETED)
    (tmp / "incoming").mkdir()
    path = tmp / "queries" / "q_top.json"
    path.parent.mkdir()
    path.write_text(json.dumps(cfg))
    return path


def test_hotspot_dag_raises_the_split_and_the_next_run_uses_it(spark, airflow_env, tmp_path,
                                                               spark_steps):
    """Skewed input (18 of 20 rows in one category): the hotspot DAG raises the TopN split
    factor with an audit record; the next query run rebuilds its state for it and stays in
    parity, and its result is Flink's."""
    from dags.twinflow_hotspot import build_hotspot_dag
    from jobs.gates import publish
    from operators_lib.runs.query_config import QueryConfig
    from tests.scheduled import batch_parity, stream_increment

    config = _topn_config(tmp_path)
    airflow_env.setenv("TWINFLOW_QUERIES", str(config.parent))
    incoming = REPO / "examples" / "topn" / "incoming" / "shop_sales"
    home = Path(airflow_env["TWINFLOW_HOME"])
    published = home / "published" / "q_top"
    shutil.copy(incoming / "2024-01-01T10.csv", tmp_path / "incoming")
    # The 10h run's steps in this process (the query DAG itself: the other tests here).
    cfg, state = QueryConfig.load(config), home / "state" / "q_top"
    run_dir = home / "runs" / "q_top" / "20240101T100000"
    assert stream_increment(cfg, spark, state, run_dir)["topn_split"] == 1
    assert batch_parity(cfg, spark, state, run_dir)["verdict"] == "equal"
    publish(cfg, run_dir, run_dir.name)

    hotspot = build_hotspot_dag(config)
    written = config.read_bytes()
    assert hotspot.test(logical_date=datetime(2024, 1, 1, 10, 30, tzinfo=UTC)).state == \
        "success"
    # The DAG folder is not written: the chosen split lives under $TWINFLOW_HOME.
    assert config.read_bytes() == written
    settings = json.loads((home / "config" / "q_top.json").read_text())["hotspot"]
    # 18/20 rows in 'phones' = 1.8 tasks' worth at parallelism 2: S = 2^ceil(log2(3.6)) = 4
    assert settings["split"] == 4
    assert (settings["last_change"]["old_split"], settings["last_change"]["new_split"]) == (1, 4)
    audit = [json.loads(p.read_text()) for p in sorted((home / "audit" / "q_top").glob("*"))]
    assert len(audit) == 1 and audit[0]["changed"]
    assert audit[0]["skew"]["rows"] == 20 and audit[0]["skew"]["largest_share"] == 0.9
    assert audit[0]["skew"]["hot_keys"] == 1 and audit[0]["skew"]["top"][0] == ["phones", 18]

    shutil.copy(incoming / "2024-01-01T11.csv", tmp_path / "incoming")
    assert _run(airflow_env, config, 11).state == "success"
    second = published / (published / "LATEST").read_text().strip()
    report = json.loads((second / "stream_report.json").read_text())
    assert report["topn_split"] == 4
    assert report["state_rebuilt"]["from_split"] == 1
    assert report["state_rebuilt"]["replayed_input_rows"] == 20
    assert report["new_input_rows"] == {"shop_sales": 10}
    assert json.loads((second / "parity.json").read_text())["verdict"] == "equal"
    flink = REPO / "tests" / "cases" / "topn" / "skewed_categories" / "expected"
    expected = (flink / "stream_final.csv").read_text().splitlines()
    assert set((second / "stream.csv").read_text().splitlines()) == set(expected)
    assert (home / "state" / "q_top" / "retired" / "checkpoint").is_dir()


def _pageviews_config(tmp: Path) -> Path:
    example = REPO / "examples" / "pageviews"
    cfg = json.loads((REPO / "dags" / "queries" / "page_views.json").read_text())
    cfg.update(name="q_views", sql=[str(example / "page_views.sql"),
                                    str(example / "views_per_minute.sql")],
               inputs={"page_views": str(tmp / "incoming")}, retries=0, publish_format="csv",
               rows_per_batch=100,  # one micro-batch a run (and the no-data one that fires)
               spark_conf=INTERPRETED)
    (tmp / "incoming").mkdir()
    path = tmp / "queries" / "q_views.json"
    path.parent.mkdir()
    path.write_text(json.dumps(cfg))
    return path


def _minute(start: str, url: str, views: int, users: int) -> str:
    end = f"{start[:3]}{int(start[3:]) + 1:02d}"
    return f"2024-01-01 {start}:00.000,2024-01-01 {end}:00.000,{url},{views},{users}"


def test_window_query_publishes_fired_windows(airflow_env, tmp_path, spark_steps):
    """TUMBLE(1 minute) under the DAG, watermark ts - 5 s, two hourly files in one run. A
    scheduled run writes no end-of-input marker: a window is published once the watermark
    passes its end; a row for a window already fired is late. (Windows fired across runs:
    tests/test_incremental_runs.py.)

    10h 8 rows up to 10:02:03: then the watermark is 10:01:58 and only 10:00 has fired.
    11h a row at 10:00:40 is late (its window fired at 10:00); one at 10:01:57 is behind the
        watermark but its window is open: counted. Rows up to 10:04:02, watermark 10:03:57:
        10:01 and 10:02 fire; 10:03 and 10:04 wait for the next run.
    """
    config = _pageviews_config(tmp_path)
    incoming = REPO / "examples" / "pageviews" / "incoming" / "page_views"
    home = Path(airflow_env["TWINFLOW_HOME"])
    published = home / "published" / "q_views"
    for hour in (10, 11):
        shutil.copy(incoming / f"2024-01-01T{hour}.csv", tmp_path / "incoming")
    run = _run(airflow_env, config, 11)
    assert run.state == "success", _task_states(run)
    assert _published_rows(home, "q_views") == {
        _minute("10:00", "/home", 3, 2), _minute("10:00", "/cart", 1, 1),
        _minute("10:01", "/home", 2, 2), _minute("10:01", "/cart", 2, 2),
        _minute("10:02", "/home", 2, 1)}
    latest = _latest(home, "q_views")
    parity = json.loads((latest / "parity.json").read_text())
    assert {k: parity[k] for k in ("verdict", "input_rows", "late_rows", "emitted_windows",
                                   "pending_windows")} == {
        "verdict": "equal_for_emitted_rows", "input_rows": 13, "late_rows": 1,
        "emitted_windows": 5, "pending_windows": 2}, parity
    report = json.loads((latest / "stream_report.json").read_text())
    assert report["late_rows"] == 1 and report["new_input_rows"] == {"page_views": 13}
    assert report["watermark"] == "2024-01-01T10:03:57.000Z"
    # the late row is the 10:00:40 view, input row 8 (the first of the second file), kept in
    # the state for the parity of later runs
    kept = sorted((home / "state" / "q_views" / "late").glob("upto-*"))
    late = pd.concat([pd.read_parquet(d) for d in kept])
    assert list(late.loc[late[OP] == "LATE", ROWNUM]) == [8]
    assert json.loads((published / "20240101T110000" / "validation.json").read_text())[
        "success"]

    # The audit DAG: all emitted windows against batch over all input, and no window the
    # watermark has passed left unemitted.
    from dags.twinflow_audit import build_audit_dag

    audit = build_audit_dag(config).test(logical_date=datetime(2024, 1, 2, tzinfo=UTC))
    assert audit.state == "success", _task_states(audit)
    record = json.loads((home / "runs" / "audit_q_views" / "20240102T000000" / "audit.json")
                        .read_text())
    assert {k: record[k] for k in ("verdict", "interval", "emitted_windows", "only_in_batch",
                                   "only_in_stream")} == {
        "verdict": "equal_for_emitted_rows", "interval": "20240101T110000",
        "emitted_windows": 5, "only_in_batch": 0, "only_in_stream": 0}
    assert record["unemitted_behind_watermark"]["rows"] == 0


def test_spark_steps_launch_a_driver_that_exits_on_oom_and_user_conf_wins(airflow_env, tmp_path):
    """Driver JVM options only count on spark-submit's command line; the query config's
    spark_conf comes after twinflow's settings."""
    config = _config(tmp_path, "tmall_max_price")
    cfg = json.loads(config.read_text())
    config.write_text(json.dumps(cfg | {"spark_conf": {"spark.driver.memory": "3g"}}))
    from dags.twinflow_queries import build_dag

    dag = build_dag(config)
    for task_id in ("stream_and_parity",):
        step = dag.get_task(task_id)
        conf = step.conf
        assert "-XX:+ExitOnOutOfMemoryError" in conf["spark.driver.defaultJavaOptions"]
        assert conf["spark.driver.memory"] == "3g"
        # a hung step is killed after the config's timeout (default 2 h), in its pool
        assert (step.execution_timeout, step.pool) == (timedelta(hours=2), "default_pool")
    config.write_text(json.dumps(cfg | {"spark_conf": {
        "spark.driver.defaultJavaOptions": "-XX:-ExitOnOutOfMemoryError"}}))
    assert build_dag(config).get_task("stream_and_parity").conf[
        "spark.driver.defaultJavaOptions"] == "-XX:-ExitOnOutOfMemoryError"
    config.write_text(json.dumps(cfg | {"step_timeout_minutes": 30, "spark_pool": "spark"}))
    step = build_dag(config).get_task("stream_and_parity")
    assert (step.execution_timeout, step.pool) == (timedelta(minutes=30), "spark")


def test_an_on_failure_that_does_not_import_is_an_error_naming_it(airflow_env, tmp_path):
    from dags.twinflow_queries import build_dag
    from operators_lib.errors import InputError

    config = _config(tmp_path, "tmall_max_price")
    cfg = json.loads(config.read_text())
    for spec in ("tests.test_dags:tolld", "tests.nowhere:told", "told"):
        config.write_text(json.dumps(cfg | {"on_failure": spec}))
        with pytest.raises(InputError, match=f"q_tmall_max_price: on_failure '{spec}'"):
            build_dag(config)


def test_a_deadline_calls_the_configs_callback(airflow_env, tmp_path):
    """deadline_minutes: Airflow's deadline of each query run (from when it was queued), whose
    miss calls on_deadline, else on_failure (a real miss: tests/test_state_dags.py); none on
    the maintenance DAGs; a deadline that would tell nobody is an error."""
    from airflow.sdk import DeadlineReference

    from dags.twinflow_queries import build_dag
    from dags.twinflow_state import build_compact_dag
    from operators_lib.errors import InputError

    config = _config(tmp_path, "tmall_max_price")
    cfg = json.loads(config.read_text()) | {"deadline_minutes": 30}
    config.write_text(json.dumps(cfg | {"on_failure": "tests.test_dags:told"}))
    (alert,) = build_dag(config).deadline
    assert (alert.interval, alert.callback.path) == (timedelta(minutes=30), "tests.test_dags.told")
    assert alert.reference == DeadlineReference.DAGRUN_QUEUED_AT
    assert not build_compact_dag(config).deadline
    config.write_text(json.dumps(cfg | {"on_failure": "tests.test_dags:told",
                                        "on_deadline": "tests.nowhere:late"}))
    with pytest.raises(InputError, match="q_tmall_max_price: on_deadline .tests.nowhere:late."):
        build_dag(config)
    config.write_text(json.dumps(cfg))
    with pytest.raises(InputError, match="deadline_minutes needs on_deadline or on_failure"):
        build_dag(config)
