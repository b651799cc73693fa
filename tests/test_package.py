"""twinflow as a package: the wheel (dependency ranges, the DAG files shipped as the package
``twinflow_dags``), the DAG file ``twinflow dags install`` writes into an Airflow DAGs folder
(parsed by Airflow's own DagBag), an installed twinflow's settings, ``twinflow --version``."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from jobs.cli import main
from operators_lib import paths
from operators_lib.errors import InputError

REPO = Path(__file__).resolve().parents[1]


def test_the_wheel_ships_the_dags_and_asks_for_ranges(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                    str(tmp_path), str(REPO)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("twinflow-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        requires = [line.split(":", 1)[1].strip() for line in
                    zf.read(metadata).decode().splitlines() if line.startswith("Requires-Dist:")
                    and "extra ==" not in line]
    assert {f"twinflow_dags/{m}.py" for m in ("twinflow_queries", "twinflow_state",
                                              "twinflow_backfill")} <= names
    assert "operators_lib/engine/log4j2.properties" in names and "jobs/dag_files.py" in names
    assert not any(n.startswith(("tests/", "benchmarks/", "examples/")) for n in names)
    # ranges, not pins: twinflow goes into an existing Airflow without replacing it
    assert requires and not [r for r in requires if "==" in r], requires
    # the Spark provider's 6.x pulls in pyspark-client, whose files overwrite pyspark's
    assert "apache-airflow-providers-apache-spark<6,>=5.3" in requires


def test_dags_install_writes_a_dag_file_airflow_parses(airflow_env, tmp_path, capsys):
    from airflow.dag_processing.dagbag import DagBag

    folder = tmp_path / "dags"
    folder.mkdir()
    assert main(["dags", "install", str(folder)]) == 0
    assert main(["dags", "install", str(folder)]) == 0  # again: rewritten
    bag = DagBag(dag_folder=str(folder))
    assert not bag.import_errors, bag.import_errors
    configs = sorted(p.stem for p in (REPO / "dags" / "queries").glob("*.json"))
    for name in configs:
        for dag_id in (f"twinflow_{name}", f"twinflow_backfill_{name}",
                       f"twinflow_checkpoints_{name}", f"twinflow_audit_{name}"):
            dag = bag.get_dag(dag_id)
            assert dag is not None and dag.fileloc == str(folder / "twinflow.py"), dag_id
    assert bag.get_dag("twinflow_reports") is not None
    # The query DAG refuses Airflow's own backfill and says what to use.
    query = bag.get_dag(f"twinflow_{configs[0]}")
    assert {t.value for t in query.allowed_run_types} == {"scheduled", "manual"}
    assert f"twinflow_backfill_{configs[0]}" in query.description
    # A file of that name the command did not write stays as it was.
    (folder / "twinflow.py").write_text("# mine\n")
    capsys.readouterr()
    assert main(["dags", "install", str(folder)]) == 2
    assert "was not written by twinflow" in capsys.readouterr().err
    assert (folder / "twinflow.py").read_text() == "# mine\n"


def test_an_installed_twinflow_needs_its_folders_named(monkeypatch):
    """Outside a source checkout the repository's folders are no defaults (they would be in
    site-packages): a setting that is not given is named."""
    monkeypatch.setattr(paths, "CHECKOUT", False)
    for variable, get in (("TWINFLOW_HOME", paths.home),
                          ("TWINFLOW_QUERIES", paths.queries_dir)):
        monkeypatch.delenv(variable, raising=False)
        with pytest.raises(InputError, match=f"{variable} is not set"):
            get()
        monkeypatch.setenv(variable, "/srv/twinflow")
        assert get() == Path("/srv/twinflow")


def test_version_names_twinflow_spark_and_airflow(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("twinflow 0.1.0 (pyspark 4.3.0, apache-airflow 3.") and "Python" in out
