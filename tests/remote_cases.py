"""Corpus cases whose files are on a store (tests/object_store.py, tests/hdfs_cluster.py):
uploaded through the client twinflow's tasks use, their DDL's WITH 'path' pointed there, and
their outputs written there."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pyarrow.fs as pafs

from operators_lib.engine.spark import session_conf
from operators_lib.io.storage import Place
from tests.caselib import Case, assert_final


def upload(fs: pafs.FileSystem, files: Path, base: str) -> None:
    """Every file under ``files`` to ``base`` (a path on ``fs``), at its relative path."""
    for path in sorted(files.rglob("*")):
        if path.is_file():
            with fs.open_output_stream(f"{base}/{path.relative_to(files)}") as out:
                out.write(path.read_bytes())


def rebound(case: Case, uri: str, work: Path) -> Case:
    """``case`` with its tables' WITH 'path' = 'files/...' under ``uri`` instead."""
    ddl = re.sub(r"'path' = 'files/", f"'path' = '{uri.rstrip('/')}/",
                 (case.dir / "ddl.sql").read_text())
    assert uri in ddl, case.dir
    work.mkdir(parents=True)
    (work / "ddl.sql").write_text(ddl)
    shutil.copy(case.dir / "query.sql", work / "query.sql")
    return Case(work)


def assert_reads_as_flink(spark, case: Case, uri: str, hadoop_conf: dict[str, str],
                          work: Path, out: Place) -> None:
    """``case`` with its files under ``uri`` (already uploaded), run in both modes (the stream
    on Structured Streaming, two rows per micro-batch) into ``out`` (its state and outputs on
    the store too), gives Flink's results."""
    moved = rebound(case, uri, work / "sql")
    with session_conf(spark, hadoop_conf):
        result = moved.run(spark, out, mode="both", rows_per_batch=2)
    assert result.exit_code == 0, result.message
    assert_final(case, out, "stream.csv", "stream_final.csv")
    assert_final(case, out, "batch.csv", "batch_final.csv")
