"""A ``Store`` (io/remote.py) from Hadoop settings: the keys Spark's s3a connector and HDFS
client read, so that a URI means to twinflow's Python clients what it means to Spark.

In a Spark application the settings are its session's Hadoop configuration
(engine/stores.store_of). Where no Spark runs (an Airflow task that gates, publishes or
renders a report), they are what Spark would read, in Spark's order (``settings``):
``$HADOOP_CONF_DIR``'s ``core-site.xml`` and ``hdfs-site.xml``; the AWS environment variables
Spark copies into its Hadoop configuration (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_SESSION_TOKEN``, ``AWS_ENDPOINT_URL``); then a query config's ``spark.hadoop.*``
settings, which win. Without keys the S3 client takes the AWS SDK's own chain (the profile, an
instance role), as the s3a connector does."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from operators_lib.io.remote import Store

Get = Callable[[str], str | None]


def store_from(get: Get) -> Store:
    """The Store that Hadoop settings ``get`` (key -> value or None) describe."""

    def value(key: str) -> str | None:
        v = get(key)
        return None if v is None or not str(v).strip() else str(v).strip()

    return Store(endpoint=value("fs.s3a.endpoint"),
                 region=value("fs.s3a.endpoint.region") or value("fs.s3a.region"),
                 path_style=(value("fs.s3a.path.style.access") or "false").lower() == "true",
                 ssl=(value("fs.s3a.connection.ssl.enabled") or "true").lower() == "true",
                 access_key=value("fs.s3a.access.key"), secret_key=value("fs.s3a.secret.key"),
                 session_token=value("fs.s3a.session.token"),
                 namenodes=tuple(_namenodes(value)), hdfs_user=value("hadoop.user.name"),
                 hdfs_auth=(value("hadoop.security.authentication") or "simple").lower())


# The environment variables Spark 4 sets Hadoop keys from (SparkHadoopUtil)
AWS_ENVIRONMENT = {"AWS_ACCESS_KEY_ID": "fs.s3a.access.key",
                   "AWS_SECRET_ACCESS_KEY": "fs.s3a.secret.key",
                   "AWS_SESSION_TOKEN": "fs.s3a.session.token",
                   "AWS_ENDPOINT_URL": "fs.s3a.endpoint"}


def settings(spark_conf: Mapping[str, str],
             environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The Hadoop settings a Spark application with ``spark_conf`` would have, outside Spark
    (module docstring: site files, AWS environment, ``spark.hadoop.*``)."""
    found: dict[str, str] = {}
    if conf_dir := environ.get("HADOOP_CONF_DIR"):
        for name in ("core-site.xml", "hdfs-site.xml"):
            found |= _site_file(Path(conf_dir) / name)
    if environ.get("AWS_ACCESS_KEY_ID") and environ.get("AWS_SECRET_ACCESS_KEY"):
        found |= {key: environ[var] for var, key in AWS_ENVIRONMENT.items()
                  if environ.get(var)}
    elif environ.get("AWS_ENDPOINT_URL"):
        found["fs.s3a.endpoint"] = environ["AWS_ENDPOINT_URL"]
    return found | {k.removeprefix("spark.hadoop."): str(v) for k, v in spark_conf.items()
                    if k.startswith("spark.hadoop.")}


def _site_file(path: Path) -> dict[str, str]:
    """A Hadoop ``*-site.xml``'s properties (none if it is not there)."""
    if not path.is_file():
        return {}
    props = ET.parse(path).getroot().iter("property")
    return {name: p.findtext("value") or "" for p in props if (name := p.findtext("name"))}


def _namenodes(get: Get) -> Iterator[tuple[str, str]]:
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
