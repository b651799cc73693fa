"""The query DAG end to end with ``dag.test()``: real spark-submit jobs, a real GX gate.

A passing run publishes; a second run with new input processes only that input and stays in
parity; a run whose output breaks its suite fails and publishes nothing.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

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
           "rows_per_batch": 2, "one_row_per_input_row": True, "retries": 0}
    path = tmp / "queries" / f"q_{suite}.json"
    path.parent.mkdir()
    path.write_text(json.dumps(cfg))
    return path


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
    assert set(dag.task_ids) == {"stream_increment", "batch_parity", "validate", "publish"}
    hotspot = bag.get_dag("twinflow_hotspot_top_shops")  # top_shops.json has a hotspot section
    assert hotspot is not None and set(hotspot.task_ids) == {"measure_skew", "choose_split"}
    assert bag.get_dag("twinflow_hotspot_tmall_max_price") is None


def test_passing_runs_publish_and_increments_stay_in_parity(airflow_env, tmp_path):
    config = _config(tmp_path, "tmall_max_price")
    incoming = tmp_path / "incoming"
    shutil.copy(SEED / "incoming" / "tmall_item" / "2017-11-11T10.csv", incoming)
    run = _run(airflow_env, config, 10)
    assert run.state == "success"
    home = Path(airflow_env["TWINFLOW_HOME"])
    published = home / "published" / "q_tmall_max_price"
    first_key = (published / "LATEST").read_text().strip()
    parity = json.loads((published / first_key / "parity.json").read_text())
    # 4 rows so far; the watermark is 10:02, so ITEM003/ITEM004 (10:03) wait; none late
    assert parity["verdict"] == "equal_for_emitted_rows"
    assert (parity["input_rows"], parity["emitted_rows"], parity["late_rows"]) == (4, 2, 0)

    shutil.copy(SEED / "incoming" / "tmall_item" / "2017-11-11T11.csv", incoming)
    run = _run(airflow_env, config, 11)
    assert run.state == "success"
    second_key = (published / "LATEST").read_text().strip()
    assert second_key != first_key
    report = json.loads((published / second_key / "stream_report.json").read_text())
    assert report["new_input_rows"] == {"tmall_item": 4}  # only the new file was read
    parity = json.loads((published / second_key / "parity.json").read_text())
    assert parity["verdict"] == "equal_for_emitted_rows"
    assert parity["input_rows"] == 8 and parity["pending_rows"] == 1  # ITEM008 > 10:07
    rows = (published / second_key / "stream.csv").read_text().splitlines()
    assert "ITEM007,Electronic,2017-11-11 10:07:00.000,70.0,70.0" in rows


def test_failed_gate_fails_the_run_and_publishes_nothing(airflow_env, tmp_path):
    suite = json.loads((REPO / "expectations" / "tmall_max_price.json").read_text())
    suite["name"] = "tmall_strict"
    suite["expectations"].append({"type": "expect_column_values_to_be_between",
                                  "kwargs": {"column": "maxPrice", "max_value": 40}})
    gx_root = tmp_path / "expectations"
    gx_root.mkdir()
    (gx_root / "tmall_strict.json").write_text(json.dumps(suite))
    airflow_env.setenv("TWINFLOW_GX_ROOT", str(gx_root))
    config = _config(tmp_path, "tmall_strict")
    for f in (SEED / "incoming" / "tmall_item").glob("*.csv"):
        shutil.copy(f, tmp_path / "incoming")
    run = _run(airflow_env, config, 12)
    assert run.state == "failed"
    states = {ti.task_id: ti.state for ti in run.get_task_instances()}
    assert states["batch_parity"] == "success"
    assert states["validate"] == "failed"
    assert states["publish"] != "success"
    home = Path(airflow_env["TWINFLOW_HOME"])
    assert not (home / "published" / "q_tmall_strict").exists()
    validation = json.loads(next((home / "runs" / "q_tmall_strict").glob(
        "*/validation.json")).read_text())
    assert validation["failed"][0]["kwargs"]["column"] == "maxPrice"


def _shop_config(tmp: Path) -> Path:
    shop = REPO / "examples" / "shop"
    cfg = json.loads((REPO / "dags" / "queries" / "revenue_by_region.json").read_text())
    cfg.update(name="q_shop", sql=[str(shop / "shop.sql"), str(shop / "revenue_by_region.sql")],
               inputs={t: str(tmp / "incoming" / t) for t in ("customers", "orders")},
               retries=0)
    for t in ("customers", "orders"):
        (tmp / "incoming" / t).mkdir(parents=True)
    path = tmp / "queries" / "q_shop.json"
    path.parent.mkdir()
    path.write_text(json.dumps(cfg))
    return path


def _published_rows(home: Path, query: str) -> set[str]:
    published = home / "published" / query
    key = (published / "LATEST").read_text().strip()
    return set((published / key / "stream.csv").read_text().splitlines()[1:])


def test_join_and_group_by_query_runs_incrementally(airflow_env, tmp_path):
    """LEFT JOIN + GROUP BY under the DAG: the second run's orders and customers retract and
    update the first run's published rows; every run is in parity with batch."""
    config = _shop_config(tmp_path)
    incoming = REPO / "examples" / "shop" / "incoming"
    home = Path(airflow_env["TWINFLOW_HOME"])
    for hour in (10, 11):
        for t in ("customers", "orders"):
            shutil.copy(incoming / t / f"2024-01-01T{hour}.csv", tmp_path / "incoming" / t)
        run = _run(airflow_env, config, hour)
        assert run.state == "success", hour
        published = home / "published" / "q_shop"
        key = (published / "LATEST").read_text().strip()
        parity = json.loads((published / key / "parity.json").read_text())
        assert parity["verdict"] == "equal", parity
        if hour == 10:
            # order 4 belongs to c9, who has not arrived yet: it waits in the join's state
            assert _published_rows(home, "q_shop") == {
                "north,2,2,15.00", "south,1,1,20.00", "east,1,0,0.00"}
    assert _published_rows(home, "q_shop") == {
        "north,2,3,18.25", "south,2,3,33.00", "east,2,1,7.00"}
    report = json.loads((published / key / "stream_report.json").read_text())
    assert report["new_input_rows"] == {"customers": 2, "orders": 3}


def _topn_config(tmp: Path) -> Path:
    example = REPO / "examples" / "topn"
    cfg = json.loads((REPO / "dags" / "queries" / "top_shops.json").read_text())
    cfg.update(name="q_top", sql=[str(example / "shop_sales.sql"), str(example / "top_shops.sql")],
               inputs={"shop_sales": str(tmp / "incoming")}, retries=0)
    (tmp / "incoming").mkdir()
    path = tmp / "queries" / "q_top.json"
    path.parent.mkdir()
    path.write_text(json.dumps(cfg))
    return path


def test_hotspot_dag_raises_the_split_and_the_next_run_uses_it(airflow_env, tmp_path):
    """Skewed input (18 of 20 rows in one category): the hotspot DAG raises the TopN split
    factor with an audit record; the next query run rebuilds its state for it and stays in
    parity, and its result is Flink's."""
    from dags.twinflow_hotspot import build_hotspot_dag

    config = _topn_config(tmp_path)
    incoming = REPO / "examples" / "topn" / "incoming" / "shop_sales"
    home = Path(airflow_env["TWINFLOW_HOME"])
    published = home / "published" / "q_top"
    shutil.copy(incoming / "2024-01-01T10.csv", tmp_path / "incoming")
    assert _run(airflow_env, config, 10).state == "success"
    first = published / (published / "LATEST").read_text().strip()
    assert json.loads((first / "stream_report.json").read_text())["topn_split"] == 1

    hotspot = build_hotspot_dag(config)
    assert hotspot.test(logical_date=datetime(2024, 1, 1, 10, 30, tzinfo=UTC)).state == \
        "success"
    settings = json.loads(config.read_text())["hotspot"]
    # 18/20 rows in 'phones' = 1.8 tasks' worth at parallelism 2: S = 2^ceil(log2(3.6)) = 4
    assert settings["split"] == 4
    assert (settings["last_change"]["old_split"], settings["last_change"]["new_split"]) == (1, 4)
    audit = [json.loads(line) for line in
             (home / "audit" / "q_top.jsonl").read_text().splitlines()]
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


def _task_states(run) -> dict[str, str]:
    return {ti.task_id: ti.state for ti in run.get_task_instances()}


# The seed's rows_max_price (MAX(price) over the current and 2 preceding rows of the same type)
# over both seed files, by its definition; with a 1 minute watermark delay ITEM008 (10:08) waits.
SEED_RESULT = {"ITEM001,Electronic,2017-11-11 10:01:00.000,20.0,20.0",
               "ITEM002,Electronic,2017-11-11 10:02:00.000,50.0,50.0",
               "ITEM003,Electronic,2017-11-11 10:03:00.000,30.0,50.0",
               "ITEM004,Electronic,2017-11-11 10:03:00.000,60.0,60.0",
               "ITEM005,Electronic,2017-11-11 10:05:00.000,40.0,60.0",
               "ITEM006,Electronic,2017-11-11 10:06:00.000,20.0,60.0",
               "ITEM007,Electronic,2017-11-11 10:07:00.000,70.0,70.0"}


def test_a_run_failed_on_a_bad_file_does_not_block_later_runs(airflow_env, tmp_path):
    """A file with a wrong header after a good one fails the run; once it is removed, the next
    run stages the good file and the new one exactly once and publishes the right result."""
    config = _config(tmp_path, "tmall_max_price")
    incoming = tmp_path / "incoming"
    shutil.copy(SEED / "incoming" / "tmall_item" / "2017-11-11T10.csv", incoming)
    (incoming / "bad.csv").write_text("itemID,kind,onSellTime,price\nX,Y,2017-11-11 10:04:00,1\n")
    run = _run(airflow_env, config, 10)
    assert run.state == "failed"
    assert _task_states(run)["stream_increment"] == "failed"
    home = Path(airflow_env["TWINFLOW_HOME"])
    assert not (home / "published" / "q_tmall_max_price").exists()

    (incoming / "bad.csv").unlink()
    shutil.copy(SEED / "incoming" / "tmall_item" / "2017-11-11T11.csv", incoming)
    run = _run(airflow_env, config, 11)
    assert run.state == "success", _task_states(run)
    published = home / "published" / "q_tmall_max_price"
    key = (published / "LATEST").read_text().strip()
    report = json.loads((published / key / "stream_report.json").read_text())
    assert report["new_input_rows"] == {"tmall_item": 8}
    parity = json.loads((published / key / "parity.json").read_text())
    assert (parity["input_rows"], parity["emitted_rows"], parity["late_rows"],
            parity["pending_rows"]) == (8, 7, 0, 1)
    rows = (published / key / "stream.csv").read_text().splitlines()[1:]
    assert len(rows) == len(SEED_RESULT) and set(rows) == SEED_RESULT


def test_rejected_rows_block_publishing_until_allowed(airflow_env, tmp_path):
    """6 of 10 rows malformed: the run fails before staging anything and the rows are in the
    run's rejected.csv; with max_rejected_rows = 6 the same input is staged and published,
    its rejected rows with it."""
    config = _config(tmp_path, "tmall_max_price")
    good = (SEED / "incoming" / "tmall_item" / "2017-11-11T10.csv").read_text()
    bad = ("ITEM10,Electronic,2017-11-11 10:04:00,abc\n"
           "ITEM11,Electronic,2017-11-11 25:04:00,10\n"
           "ITEM12,Electronic,2017-11-11 10:04:00\n"
           "ITEM13,Electronic,,10\n"
           "ITEM14,Electronic,2017-11-11 10:04:00,1e\n"
           "ITEM15,Electronic,2017-11-11 10:04:00,10,10\n")
    (tmp_path / "incoming" / "mixed.csv").write_text(good + bad)
    run = _run(airflow_env, config, 10)
    assert run.state == "failed"
    assert _task_states(run)["stream_increment"] == "failed"
    home = Path(airflow_env["TWINFLOW_HOME"])
    assert not (home / "published" / "q_tmall_max_price").exists()
    rejected = next((home / "runs" / "q_tmall_max_price").glob("*/rejected.csv"))
    assert len(rejected.read_text().splitlines()) == 1 + 6
    state = home / "state" / "q_tmall_max_price"
    assert not list(state.glob("staged/*/part-*"))  # the input was not consumed

    cfg = json.loads(config.read_text())
    config.write_text(json.dumps(cfg | {"max_rejected_rows": 6}))
    run = _run(airflow_env, config, 11)
    assert run.state == "success", _task_states(run)
    published = home / "published" / "q_tmall_max_price"
    key = (published / "LATEST").read_text().strip()
    report = json.loads((published / key / "stream_report.json").read_text())
    assert (report["new_input_rows"], report["rejected_rows"]) == ({"tmall_item": 4}, 6)
    assert len((published / key / "rejected.csv").read_text().splitlines()) == 1 + 6


def test_spark_steps_launch_a_driver_that_exits_on_oom_and_user_conf_wins(airflow_env, tmp_path):
    """Driver JVM options only count on spark-submit's command line; the query config's
    spark_conf comes after twinflow's settings."""
    config = _config(tmp_path, "tmall_max_price")
    cfg = json.loads(config.read_text())
    config.write_text(json.dumps(cfg | {"spark_conf": {"spark.driver.memory": "3g"}}))
    from dags.twinflow_queries import build_dag

    dag = build_dag(config)
    for task_id in ("stream_increment", "batch_parity"):
        conf = dag.get_task(task_id).conf
        assert "-XX:+ExitOnOutOfMemoryError" in conf["spark.driver.defaultJavaOptions"]
        assert conf["spark.driver.memory"] == "3g"
    config.write_text(json.dumps(cfg | {"spark_conf": {
        "spark.driver.defaultJavaOptions": "-XX:-ExitOnOutOfMemoryError"}}))
    assert build_dag(config).get_task("stream_increment").conf[
        "spark.driver.defaultJavaOptions"] == "-XX:-ExitOnOutOfMemoryError"
