"""The jars twinflow adds to Spark: the Hadoop connector jars Spark needs for ``s3a://``
(Hadoop's ``hadoop-aws`` and the AWS SDK bundle it was built with, at the Hadoop version of
pyspark's jars) and Spark's Avro data source (an INSERT INTO an avro table), fetched once
from Maven Central (``bootstrap.sh``: ``python -m operators_lib.engine.stores``) into
``$TWINFLOW_JARS`` (default ``~/.cache/twinflow/jars``) and put on the driver's and the
executors' class path by Spark's ``defaultExtraClassPath`` settings (engine/spark.py),
before the user's ``extraClassPath``.

On a cluster whose Spark already has them (a Hadoop-provided distribution, EMR, Dataproc), set
``spark.driver.extraClassPath`` / ``spark.executor.extraClassPath`` (or nothing, if they are in
Spark's jars): the user's settings win.
"""

from __future__ import annotations

import hashlib
import os
import sys
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

from operators_lib.io.hadoop_conf import store_from
from operators_lib.io.remote import Store

if TYPE_CHECKING:  # the DAG files import this module (jvm_archive) without pyspark
    from pyspark.sql import SparkSession

MAVEN = "https://repo1.maven.org/maven2"
# (group path, artifact, version): hadoop-aws of pyspark's Hadoop and its compile-scope
# dependencies at the versions its parent pom (hadoop-project) names
JARS = (
    ("org/apache/hadoop", "hadoop-aws", "3.5.0"),
    ("software/amazon/awssdk", "bundle", "2.35.4"),
    ("software/amazon/s3/analyticsaccelerator", "analyticsaccelerator-s3", "1.3.1"),
    # Spark's Avro writer: 4.3.0 is not on Maven Central; 4.2.0's writer, all twinflow uses,
    # runs on Spark 4.3 (tests/cases/sinks/avro_types; its only dependency, avro, is Spark's)
    ("org/apache/spark", "spark-avro_2.13", "4.2.0"),
)


def jars_dir() -> Path:
    return Path(os.environ.get("TWINFLOW_JARS") or Path.home() / ".cache" / "twinflow" / "jars")


Jar = tuple[str, str, str]


def jar_paths(jars: tuple[Jar, ...] = JARS) -> list[Path]:
    return [jars_dir() / f"{artifact}-{version}.jar" for _, artifact, version in jars]


def classpath() -> str | None:
    """The connector jars as a class path, None until they are fetched."""
    paths = jar_paths()
    return os.pathsep.join(map(str, paths)) if all(p.is_file() for p in paths) else None


def fetch(jars: tuple[Jar, ...] = JARS) -> list[Path]:
    """Download the jars that are missing, each checked against Maven Central's SHA-1."""
    jars_dir().mkdir(parents=True, exist_ok=True)
    for (group, artifact, version), path in zip(jars, jar_paths(jars)):
        if path.is_file():
            continue
        url = f"{MAVEN}/{group}/{artifact}/{version}/{path.name}"
        with urllib.request.urlopen(f"{url}.sha1", timeout=60) as response:
            expected = response.read().decode().split()[0]
        part = path.with_suffix(".part")
        digest = hashlib.sha1()
        with urllib.request.urlopen(url, timeout=60) as response, open(part, "wb") as out:
            while chunk := response.read(1 << 20):
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != expected:
            part.unlink()
            raise RuntimeError(f"{url}: SHA-1 {digest.hexdigest()}, Maven Central says "
                               f"{expected}")
        part.replace(path)
    return jar_paths(jars)


if __name__ == "__main__":
    try:
        fetch()
    except OSError as e:  # no network: everything but object stores and Avro writing works
        print(f"bootstrap: warning: the jars for object stores and Avro writing were not "
              f"fetched ({e})", file=sys.stderr)


def store_of(spark: SparkSession) -> Store:
    """How the driver and the tasks reach S3 and HDFS from Python (io/remote.py): the
    settings in the session's Hadoop configuration (core-site.xml and hdfs-site.xml,
    ``spark.hadoop.*``, session settings)."""
    conf = spark._jsparkSession.sessionState().newHadoopConf()
    return store_from(conf.get)
