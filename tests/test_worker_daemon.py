"""The Python workers of a local session import the installed pyspark (its bytecode cached), not
Spark's zip of the same files (operators_lib/worker_daemon.py)."""

from __future__ import annotations

from pathlib import Path

import pyspark

from operators_lib.worker_daemon import prefer_installed_pyspark

INSTALLED = Path(pyspark.__file__).parent
SITE = str(INSTALLED.parent)
ZIPS = [str(INSTALLED / "python" / "lib" / "pyspark.zip"),
        str(next((INSTALLED / "python" / "lib").glob("py4j-*-src.zip")))]


def test_the_installed_pyspark_goes_before_its_own_zips():
    assert prefer_installed_pyspark(["/w", *ZIPS, SITE]) == ["/w", SITE, *ZIPS]


def test_the_zips_of_another_spark_home_keep_their_place(tmp_path):
    other = tmp_path / "spark" / "python" / "lib"
    other.mkdir(parents=True)
    path = [str(other / "pyspark.zip"), str(other / "py4j-0.10.9.9-src.zip"), SITE]
    assert prefer_installed_pyspark(path) == path  # not the installed package's files
    assert prefer_installed_pyspark([*ZIPS]) == [*ZIPS]  # nothing installed to prefer


def _imported(_: object) -> str:
    import pyspark.worker

    return pyspark.worker.__file__


def test_the_sessions_workers_import_the_installed_pyspark(spark):
    files = spark.sparkContext.parallelize(range(2), 2).map(_imported).collect()
    assert files == [str(INSTALLED / "worker.py")] * 2
