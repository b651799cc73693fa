"""Spark's Python processes of a local session import the installed pyspark (its bytecode
cached), not Spark's zips of the same files, and the daemon's workers start with what they
import loaded (operators_lib/engine/worker_daemon.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyspark

from operators_lib.engine.worker_daemon import own_zips, python_launcher

INSTALLED = Path(pyspark.__file__).parent
SITE = str(INSTALLED.parent)
ZIPS = [str(INSTALLED / "python" / "lib" / "pyspark.zip"),
        str(next((INSTALLED / "python" / "lib").glob("py4j-*-src.zip")))]
JAR = str(INSTALLED / "jars" / "spark-core.jar")
SPARK_PATH = os.pathsep.join([*ZIPS, JAR])  # as PythonUtils.sparkPythonPath gives it


def test_the_installed_pyspark_replaces_its_own_zips():
    assert own_zips(SPARK_PATH, [SITE]) == os.pathsep.join(ZIPS)
    # a spark-submitted driver has the zips on its own path too
    assert own_zips(SPARK_PATH, [*ZIPS, SITE]) == os.pathsep.join(ZIPS)


def test_the_zips_of_another_spark_home_keep_their_place(tmp_path):
    other = tmp_path / "spark" / "python" / "lib"
    other.mkdir(parents=True)
    theirs = [str(other / "pyspark.zip"), str(other / "py4j-0.10.9.9-src.zip")]
    assert own_zips(os.pathsep.join(theirs), [SITE]) is None  # not the installed package's
    assert own_zips(SPARK_PATH, [str(tmp_path)]) is None  # nothing installed to prefer


def test_the_launcher_drops_the_zips_in_front_and_keeps_the_rest(tmp_path):
    launcher = python_launcher(SPARK_PATH, sys.executable, tmp_path)
    assert launcher is not None and os.access(launcher, os.X_OK)
    assert python_launcher(SPARK_PATH, sys.executable, tmp_path) == launcher  # written once
    show = "import json, sys, pyspark; print(pyspark.__file__); print(json.dumps(sys.path))"

    def run(command: str, pythonpath: str | None) -> tuple[str, list[str]]:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        out = subprocess.run([command, "-c", show], capture_output=True, text=True, check=True,
                             env=env if pythonpath is None else {**env, "PYTHONPATH": pythonpath})
        where, path = out.stdout.splitlines()
        return where, json.loads(path)

    _, base = run(sys.executable, None)
    for pythonpath, kept in [(f"{SPARK_PATH}{os.pathsep}/mine", [JAR, "/mine"]),
                             ("/mine", ["/mine"]), ("", [])]:
        where, path = run(str(launcher), pythonpath)
        assert where == pyspark.__file__
        assert [p for p in path if p not in base] == kept


def _imported(_: object) -> tuple[str, bool, bool]:
    import sys

    import pyspark.worker

    zips = [p for p in (*sys.path, *sys.path_importer_cache) if p.endswith(".zip") and
            "pyspark" in p]
    return pyspark.worker.__file__, bool(zips), "operators_lib.stream.over" in sys.modules


def test_the_sessions_workers_import_the_installed_pyspark(spark):
    # Every Python process of the session (transformWithState's driver-side one too) starts
    # through the launcher.
    assert Path(spark.sparkContext.pythonExec).name.startswith("python-")
    seen = spark.sparkContext.parallelize(range(2), 2).map(_imported).collect()
    # No zip left where the import system looks (its path or its cache of finders), and the
    # operators came with the fork: the task imported none of them.
    assert seen == [(str(INSTALLED / "worker.py"), False, True)] * 2


def _collected(_: object) -> int:
    import gc

    gc.collect()
    return len(gc.get_objects())


def test_the_workers_garbage_collector_skips_what_the_daemon_imported(spark):
    # pyspark's daemon collects after every task: it must not walk the ~100,000 objects of the
    # preloaded modules (frozen before the fork) each time.
    tracked = spark.sparkContext.parallelize(range(2), 2).map(_collected).collect()
    assert max(tracked) < 20_000, tracked
