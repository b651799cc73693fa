"""The Python workers of a local session import the installed pyspark (its bytecode cached), not
Spark's zips of the same files (operators_lib/worker_daemon.py)."""

from __future__ import annotations

from pathlib import Path

import pyspark

from operators_lib.worker_daemon import without_own_zips

INSTALLED = Path(pyspark.__file__).parent
SITE = str(INSTALLED.parent)
ZIPS = [str(INSTALLED / "python" / "lib" / "pyspark.zip"),
        str(next((INSTALLED / "python" / "lib").glob("py4j-*-src.zip")))]


def test_the_installed_pyspark_replaces_its_own_zips():
    assert without_own_zips(["/w", *ZIPS, SITE]) == ["/w", SITE]


def test_the_zips_of_another_spark_home_keep_their_place(tmp_path):
    other = tmp_path / "spark" / "python" / "lib"
    other.mkdir(parents=True)
    path = [str(other / "pyspark.zip"), str(other / "py4j-0.10.9.9-src.zip"), SITE]
    assert without_own_zips(path) == path  # not the installed package's files
    assert without_own_zips([*ZIPS]) == [*ZIPS]  # nothing installed to prefer


def _imported(_: object) -> tuple[str, bool]:
    import sys

    import pyspark.worker

    return pyspark.worker.__file__, any(p.endswith(".zip") and "pyspark" in p for p in sys.path)


def test_the_sessions_workers_import_the_installed_pyspark(spark):
    seen = spark.sparkContext.parallelize(range(2), 2).map(_imported).collect()
    assert seen == [(str(INSTALLED / "worker.py"), False)] * 2
