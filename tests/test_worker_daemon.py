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


def _imported(_: object) -> tuple[str, bool, bool]:
    import sys

    import pyspark.worker

    zips = [p for p in (*sys.path, *sys.path_importer_cache) if p.endswith(".zip") and
            "pyspark" in p]
    return pyspark.worker.__file__, bool(zips), "operators_lib.stream.over" in sys.modules


def test_the_sessions_workers_import_the_installed_pyspark(spark):
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
