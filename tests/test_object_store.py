"""Tables on an object store: the s3a connector jars that bootstrap.sh fetches
(operators_lib/engine/stores.py) on the session's class path, a real S3-compatible server on
the loopback interface (tests/object_store.py), and twinflow reading WITH-bound tables from
it (io/remote.py) as Flink reads the same files: the source cases' files uploaded, their
results Flink's (the cases' expected/)."""

from __future__ import annotations

import re
import shutil

import pytest
from pyspark.sql import Row

from operators_lib.engine.spark import session_conf
from operators_lib.engine.stores import classpath
from operators_lib.io.remote import Store
from tests.caselib import Case, all_cases, assert_final
from tests.object_store import ACCESS_KEY, SECRET_KEY, S3Server

CASES = [c for c in all_cases("sources") if c.dir.name in (
    "csv_positional", "json_rules", "parquet_types", "avro_types", "csv_partitioned")]


@pytest.fixture(scope="module")
def s3():
    with S3Server() as server:
        server.bucket("data")
        yield server


def _upload(s3: S3Server, case: Case, prefix: str) -> None:
    fs = Store(endpoint=s3.endpoint, path_style=True, access_key=ACCESS_KEY,
               secret_key=SECRET_KEY).filesystem()
    files = case.dir / "files"
    for path in files.rglob("*"):
        if path.is_file():
            with fs.open_output_stream(f"data/{prefix}/{path.relative_to(files)}") as out:
                out.write(path.read_bytes())


def test_spark_writes_and_reads_parquet_on_the_loopback_s3_server(spark, s3):
    assert classpath() and "hadoop-aws" in spark.sparkContext.getConf().get(
        "spark.driver.defaultExtraClassPath")
    with session_conf(spark, s3.hadoop_conf()):
        rows = [Row(id=1, name="a"), Row(id=2, name=None)]
        spark.createDataFrame(rows, "id INT, name STRING").write.parquet("s3a://data/spark/")
        assert sorted(spark.read.parquet("s3a://data/spark/").collect()) == sorted(rows)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_table_on_s3_reads_as_flink_reads_its_files(spark, s3, tmp_path, case):
    """The case's files under s3a://data/<case>/ (its WITH 'path' pointed there; s3:// for
    one), read in both modes; the stream on Structured Streaming."""
    _upload(s3, case, case.dir.name)
    scheme = "s3" if case.dir.name == "json_rules" else "s3a"
    ddl = re.sub(r"'path' = 'files/", f"'path' = '{scheme}://data/{case.dir.name}/",
                 (case.dir / "ddl.sql").read_text())
    sql = tmp_path / "sql"
    sql.mkdir()
    (sql / "ddl.sql").write_text(ddl)
    shutil.copy(case.dir / "query.sql", sql / "query.sql")
    on_s3 = Case(sql)
    with session_conf(spark, s3.hadoop_conf()):
        result = on_s3.run(spark, tmp_path / "out", mode="both", rows_per_batch=2)
    assert result.exit_code == 0, result.message
    assert_final(case, tmp_path / "out", "stream.csv", "stream_final.csv")
    assert_final(case, tmp_path / "out", "batch.csv", "batch_final.csv")


def test_a_missing_prefix_and_a_store_that_does_not_answer_are_errors_naming_the_uri(
        spark, s3, tmp_path, capsys):
    from jobs.cli import main

    (tmp_path / "ddl.sql").write_text(
        "CREATE TABLE t (id INT) WITH ('connector' = 'filesystem', "
        "'path' = 's3a://data/absent/', 'format' = 'csv');\n")
    (tmp_path / "q.sql").write_text("SELECT id FROM t")
    args = ["run", "--sql", str(tmp_path / "ddl.sql"), "--sql", str(tmp_path / "q.sql"),
            "--out", str(tmp_path / "out")]
    with session_conf(spark, s3.hadoop_conf()):
        assert main(args) == 2
    err = capsys.readouterr().err
    assert "s3a://data/absent/" in err and SECRET_KEY not in err, err
    with session_conf(spark, s3.hadoop_conf() | {"fs.s3a.endpoint": "http://127.0.0.1:9"}):
        assert main(args) == 2
    err = capsys.readouterr().err
    assert "s3a://data/absent/" in err and SECRET_KEY not in err, err
