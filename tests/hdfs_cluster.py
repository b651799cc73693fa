"""A real HDFS on the loopback interface: Hadoop's MiniDFSCluster (one namenode, one datanode,
WebHDFS on) from ``hadoop-client-minicluster`` at pyspark's Hadoop version, fetched once from
Maven Central into ``~/.cache/twinflow/jars`` with the test classes it needs, and run by its
own command-line manager in a JVM of its own.

    with MiniDfs(tmp) as hdfs:                 # hdfs.uri: hdfs://localhost:PORT
        session_conf(spark, hdfs.hadoop_conf())  # where its namenode's WebHDFS listens
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

import pyarrow.fs as pafs

from operators_lib.engine.stores import fetch
from operators_lib.io.remote import Store
from tests.cluster import stop

JARS = (("org/apache/hadoop", "hadoop-client-minicluster", "3.5.0"),
        ("org/junit/jupiter", "junit-jupiter-api", "5.13.3"),  # MiniDFSCluster's asserts
        ("org/opentest4j", "opentest4j", "1.3.0"))
SPARK_JARS = Path(__import__("pyspark").__file__).parent / "jars"


class MiniDfs:
    def __init__(self, work: Path) -> None:
        self.work = work
        self.proc: subprocess.Popen | None = None
        self.uri = self.http = ""

    def __enter__(self) -> MiniDfs:
        self.work.mkdir(parents=True, exist_ok=True)
        details, conf = self.work / "details.json", self.work / "conf.xml"
        classpath = [*map(str, fetch(JARS)), str(SPARK_JARS / "*")]
        self.proc = subprocess.Popen(
            ["java", "-Xmx512m", "-cp", os.pathsep.join(classpath),
             f"-Dtest.build.data={self.work / 'data'}",
             "org.apache.hadoop.test.MiniDFSClusterManager", "-format",
             "-writeDetails", str(details), "-writeConfig", str(conf)],
            cwd=self.work, stdout=subprocess.DEVNULL, stderr=open(self.work / "log", "wb"),
            start_new_session=True)
        deadline = time.monotonic() + 90
        while not (details.exists() and details.stat().st_size and conf.exists()):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.__exit__()
                raise RuntimeError(f"MiniDFSCluster did not start: {self.work / 'log'}")
            time.sleep(0.2)
        port = json.loads(details.read_text())["namenode_port"]
        http = re.search(r"<name>dfs.namenode.http-address</name><value>([^<]*)",
                         conf.read_text())
        assert http, conf
        self.uri, self.http = f"hdfs://localhost:{port}", http.group(1)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            stop([self.proc], timeout=10)
            self.proc = None

    def hadoop_conf(self) -> dict[str, str]:
        """Session settings naming the namenode's WebHDFS address (Spark itself needs none:
        the URIs name the namenode)."""
        return {"dfs.namenode.rpc-address": self.uri[len("hdfs://"):],
                "dfs.namenode.http-address": self.http}

    def store(self) -> Store:
        """How twinflow reaches the cluster (its namenode's WebHDFS address)."""
        return Store(namenodes=((self.uri[len("hdfs://"):], self.http),))

    def filesystem(self) -> pafs.FileSystem:
        """The cluster as twinflow's tasks reach it (WebHDFS)."""
        return self.store().webhdfs(self.uri[len("hdfs://"):])
