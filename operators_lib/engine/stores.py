"""Object stores and HDFS: the Hadoop connector jars Spark needs for ``s3a://`` (Hadoop's
``hadoop-aws`` and the AWS SDK bundle it was built with, at the Hadoop version of pyspark's
jars), fetched once from Maven Central (``bootstrap.sh``: ``python -m
operators_lib.engine.stores``) into ``$TWINFLOW_JARS`` (default ``~/.cache/twinflow/jars``) and
put on the driver's and the executors' class path by Spark's ``defaultExtraClassPath``
settings (engine/spark.py), before the user's ``extraClassPath``.

On a cluster whose Spark already has them (a Hadoop-provided distribution, EMR, Dataproc), set
``spark.driver.extraClassPath`` / ``spark.executor.extraClassPath`` (or nothing, if they are in
Spark's jars): the user's settings win.
"""

from __future__ import annotations

import hashlib
import os
import sys
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

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
    except OSError as e:  # no network: everything but object stores works
        print(f"bootstrap: warning: the object-store connector jars were not fetched ({e})",
              file=sys.stderr)


def store_of(spark: SparkSession) -> Store:
    """How the driver and the tasks reach S3 and HDFS from Python (io/remote.py): the
    settings in the session's Hadoop configuration (core-site.xml and hdfs-site.xml,
    ``spark.hadoop.*``, session settings)."""
    conf = spark._jsparkSession.sessionState().newHadoopConf()

    def get(key: str) -> str | None:
        value = conf.get(key)
        return None if value is None or not str(value).strip() else str(value).strip()

    return Store(endpoint=get("fs.s3a.endpoint"),
                 region=get("fs.s3a.endpoint.region") or get("fs.s3a.region"),
                 path_style=(get("fs.s3a.path.style.access") or "false").lower() == "true",
                 ssl=(get("fs.s3a.connection.ssl.enabled") or "true").lower() == "true",
                 access_key=get("fs.s3a.access.key"), secret_key=get("fs.s3a.secret.key"),
                 namenodes=tuple(_namenodes(get)), hdfs_user=get("hadoop.user.name"),
                 hdfs_auth=(get("hadoop.security.authentication") or "simple").lower())


def _namenodes(get: Callable[[str], str | None]) -> Iterator[tuple[str, str]]:
    """(namenode authority as URIs name it, its WebHDFS address): the default file system's
    and each name service's (HA: its first namenode; WebHDFS does not fail over)."""
    default = get("fs.defaultFS") or ""
    http = get("dfs.namenode.http-address")
    if http and default.lower().startswith("hdfs://"):
        authority = default[len("hdfs://"):].split("/", 1)[0]
        yield authority, _connectable(http, authority)
    if http and (rpc := get("dfs.namenode.rpc-address")):
        yield rpc, _connectable(http, rpc)
    for service in filter(None, (get("dfs.nameservices") or "").split(",")):
        nodes = [n.strip() for n in (get(f"dfs.ha.namenodes.{service}") or "").split(",")]
        keys = [f"{service}.{n}" for n in nodes if n] or [service]
        address = next(filter(None, (get(f"dfs.namenode.http-address.{k}") for k in keys)),
                       None)
        if address:
            yield service.strip(), address


def _connectable(http: str, rpc: str) -> str:
    """An HTTP bind address as an address to connect to: a wildcard (0.0.0.0:9870) is on the
    namenode's host."""
    host, _, port = http.rpartition(":")
    return f"{rpc.split(':')[0] if host in ('0.0.0.0', '') else host}:{port}"
