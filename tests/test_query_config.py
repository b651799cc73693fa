"""The query config's model (operators_lib/runs/query_config.py): the shipped configs load; an
unknown or misspelt key, a wrong type or a value out of range is exit 2 naming the file and the
key; the defaults; the hotspot DAG's choice over the file's split; docs/QUERY_CONFIG.md is
what the model generates."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from operators_lib.errors import InputError
from operators_lib.runs.config_doc import DOC, reference
from operators_lib.runs.query_config import Hotspot, QueryConfig

REPO = Path(__file__).resolve().parents[1]
SHIPPED = sorted((REPO / "dags" / "queries").glob("*.json"))
MINIMAL = {"name": "q", "sql": ["q.sql"], "inputs": {"t": "incoming/t"}, "expectations": "s"}


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A fresh $TWINFLOW_HOME: no split chosen by a hotspot DAG unless the test writes one."""
    monkeypatch.setenv("TWINFLOW_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def _write(tmp_path: Path, raw: dict) -> Path:
    path = tmp_path / "queries" / "q.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(raw))
    return path


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_shipped_config_loads(path, home):
    cfg = QueryConfig.load(path)
    assert cfg.name == path.stem
    assert cfg.sql and all(p.is_file() for p in cfg.sql)  # relative to the config file
    assert cfg.inputs and all(p.is_dir() for p in cfg.inputs.values())


@pytest.mark.parametrize(("change", "expected"), [
    ({"hotspt": {"split": 2}}, "unknown key 'hotspt' (did you mean 'hotspot'?)"),
    ({"hotspot": {"splt": 2}}, "unknown key 'hotspot.splt' (did you mean 'split'?)"),
    ({"checkpoints": {"kep": 2}}, "unknown key 'checkpoints.kep' (did you mean 'keep'?)"),
    ({"rows_per_batch": "5"}, "rows_per_batch: input should be a valid integer, got '5'"),
    ({"one_row_per_input_row": 1}, "one_row_per_input_row: input should be a valid boolean"),
    ({"sql": "q.sql"}, "sql: input should be a valid array"),
    ({"spark_conf": {"spark.driver.memory": 8}},
     "spark_conf.spark.driver.memory: input should be a valid string, got 8"),
    ({"max_rejected_rows": -1}, "max_rejected_rows: input should be greater than or equal to 0"),
    ({"hotspot": {"max_split": 0}}, "hotspot.max_split: input should be greater than or equal"),
])
def test_a_bad_key_or_value_is_an_input_error_naming_file_and_key(tmp_path, home, change,
                                                                   expected):
    path = _write(tmp_path, MINIMAL | change)
    for read in (QueryConfig.read, QueryConfig.load):
        with pytest.raises(InputError) as err:
            read(path)
        assert str(err.value).startswith(f"{path}: ") and expected in str(err.value)


def test_every_problem_is_named_at_once(tmp_path, home):
    path = _write(tmp_path, {k: v for k, v in MINIMAL.items() if k != "expectations"} | {
        "schedul": "@hourly"})
    with pytest.raises(InputError, match=r"missing key 'expectations'; unknown key 'schedul' "
                                         r"\(did you mean 'schedule'\?\)"):
        QueryConfig.read(path)


def test_a_file_that_is_no_json_object_is_an_input_error(tmp_path, home):
    path = _write(tmp_path, MINIMAL)
    for text, expected in (("{", "invalid JSON"), ("[]", "input should be an object")):
        path.write_text(text)
        with pytest.raises(InputError, match=f"^{path}: {expected}"):
            QueryConfig.read(path)


def test_a_bad_config_fails_the_spark_submit_job_with_exit_2(tmp_path, home, capsys):
    from jobs.twinflow_job import main

    path = _write(tmp_path, MINIMAL | {"hotspot": {"splt": 2}})
    assert main(["audit", "--config", str(path), "--run-dir", str(tmp_path / "run")]) == 2
    assert f"{path}: unknown key 'hotspot.splt'" in capsys.readouterr().err


def test_defaults_and_paths_relative_to_the_config_file(tmp_path, home):
    path = _write(tmp_path, MINIMAL | {"sql": ["q.sql", "/abs/ddl.sql"]})
    cfg = QueryConfig.load(path)
    assert cfg.sql == [path.parent / "q.sql", Path("/abs/ddl.sql")]
    assert cfg.inputs == {"t": path.parent / "incoming" / "t"}
    assert (cfg.rows_per_batch, cfg.schedule, cfg.max_rejected_rows,
            cfg.one_row_per_input_row) == (1000, None, 0, False)
    assert (cfg.retries, cfg.spark_conn_id, cfg.spark_conf) == (1, "spark_default", {})
    assert (cfg.audit_schedule, cfg.compact_schedule) == ("@daily", "@daily")
    assert (cfg.checkpoints.schedule, cfg.checkpoints.keep) == (None, 3)
    assert cfg.hotspot is None and cfg.topn_split == 1
    assert Hotspot() == Hotspot(split=1, max_split=128, parallelism=2, window_rows=1_000_000,
                                schedule="@daily")
    assert QueryConfig.model_validate(MINIMAL).sql == [Path("q.sql")]  # built in code: as given


def test_the_hotspot_dags_choice_wins_over_the_files_split(tmp_path, home):
    from operators_lib.runs.hotspot import Skew, decide

    path = _write(tmp_path, MINIMAL | {"hotspot": {"split": 2, "max_split": 64}})
    # 90% of the rows in one partition at parallelism 2: 1.8 tasks' worth needs S = 4.
    record = decide(path, Skew(1000, 10, 0.9, 1, []))
    assert (record["old_split"], record["new_split"]) == (2, 4)
    chosen = json.loads((home / "config" / "q.json").read_text())["hotspot"]
    assert chosen["split"] == 4 and chosen["last_change"]["new_split"] == 4
    cfg = QueryConfig.load(path)
    assert cfg.topn_split == 4 and cfg.hotspot.max_split == 64  # the rest is the file's
    assert QueryConfig.read(path).topn_split == 2  # the file as written (the DAG files)
    # A config without its hotspot section keeps the chosen split, and gets no hotspot DAG.
    _write(tmp_path, MINIMAL)
    assert QueryConfig.load(path).topn_split == 4 and QueryConfig.read(path).hotspot is None
    (home / "config" / "q.json").write_text(json.dumps({"hotspot": {"split": "4"}}))
    with pytest.raises(InputError, match=rf"^{home / 'config' / 'q.json'}: hotspot.split: "):
        QueryConfig.load(path)


def test_the_dag_files_import_no_spark_with_the_config():
    """DAG files import the model at Airflow's parse time."""
    heavy = ("pyspark", "pandas", "numpy", "airflow")
    proc = subprocess.run(
        [sys.executable, "-c", "import sys, operators_lib.runs.query_config; print(sorted("
         f"{{m.split('.')[0] for m in sys.modules}} & {set(heavy)!r}))"],
        cwd=REPO, capture_output=True, text=True, env={"PYTHONPATH": str(REPO)})
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", proc.stdout + proc.stderr


def test_the_reference_is_current():
    assert reference() == DOC.read_text(), (
        "docs/QUERY_CONFIG.md is out of date: run PYTHONPATH=. .venv/bin/python -m "
        "operators_lib.runs.config_doc")
