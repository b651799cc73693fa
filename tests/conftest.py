"""Shared fixtures: one local SparkSession for the whole run (JVM start-up once)."""

from __future__ import annotations

import os
import sys

import pytest

from tests.cluster import INTERPRETED, JVM_OPTS

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
# The driver JVMs the tests start: the session's, the DAG steps' spark-submit.
os.environ.setdefault("SPARK_SUBMIT_OPTS", JVM_OPTS)

# Modules whose tests each take a minute or more (a cluster, DAG runs and CLI runs start JVMs),
# or half a minute each (scheduled runs, snapshots): in this order, before the others.
SLOW_FIRST = ("test_cluster.py", "test_state_dags.py", "test_dags.py", "test_console.py",
              "test_incremental_runs.py", "test_snapshots.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slowest tests first: with work stealing (bootstrap.sh test) the other processes then
    fill in behind them, instead of one process ending the suite alone on a DAG run."""
    items.sort(key=lambda item: SLOW_FIRST.index(item.path.name)
               if item.path.name in SLOW_FIRST else len(SLOW_FIRST))


@pytest.fixture(scope="session")
def spark():
    from operators_lib.engine.spark import get_spark

    session = get_spark("local[2]", app="twinflow-tests", conf=INTERPRETED)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def _airflow_home(tmp_path_factory):
    """Airflow on SQLite in a temp AIRFLOW_HOME, initialised once per test session."""
    home = tmp_path_factory.mktemp("airflow")
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": os.path.join(repo, "dags"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
        # spark-submit --master local[2] (the brackets must be URL-encoded)
        "AIRFLOW_CONN_SPARK_DEFAULT": "spark://local%5B2%5D",
        "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
    }
    os.environ.update(env)
    from airflow.utils import db

    db.initdb()
    return env


@pytest.fixture
def airflow_env(_airflow_home, tmp_path, monkeypatch):
    """Per test: a fresh TWINFLOW_HOME (state, runs, published)."""
    monkeypatch.setenv("TWINFLOW_HOME", str(tmp_path / "twinflow_home"))
    monkeypatch.setitem(_airflow_home, "TWINFLOW_HOME", str(tmp_path / "twinflow_home"))

    class Env(dict):
        setenv = staticmethod(monkeypatch.setenv)

    return Env(_airflow_home)


@pytest.fixture(scope="session")
def s3():
    """A real S3-compatible server on loopback with a bucket ``data`` (tests/object_store.py),
    once per test process."""
    from tests.object_store import S3Server

    with S3Server() as server:
        server.bucket("data")
        yield server


@pytest.fixture(scope="session")
def hdfs(tmp_path_factory):
    """A real MiniDFSCluster on loopback (tests/hdfs_cluster.py), once per test process."""
    from tests.hdfs_cluster import MiniDfs

    with MiniDfs(tmp_path_factory.mktemp("minidfs")) as cluster:
        yield cluster
