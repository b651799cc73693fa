"""A Spark standalone cluster on the loopback interface, started from the pyspark wheel: one
master and N workers of one core each, as separate JVMs (their executors too), so that what
runs on it crosses process boundaries as on a real cluster (pickled processors, shipped code,
shuffles between executors).

    python -m tests.cluster --dir DIR [--workers 2]   # start; prints the master URL, Ctrl-C stops
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

import pyspark

SPARK_HOME = Path(pyspark.__file__).parent
READY_S = 60
# Every JVM the tests start is short-lived on two busy cores: the C2 JIT's compile threads cost
# more CPU than they give back (one test file: 139 s -> 118 s; the whole suite 16 -> 23 min).
# With C1 alone the code cache is 48 MB, which a session's JVM fills in about a minute of
# corpus cases (~28,000 compiled methods); then the sweeper throws compiled code away and the
# JIT compiles it again, over and over: 256 MB (76 window cases: the JVM's CPU 72 -> 61 s).
JVM_OPTS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:ReservedCodeCacheSize=256m"

# Spark settings of the test session and of the query DAG tests' spark-submit: expressions
# evaluated interpreted, as Spark's own tests do in one of their modes. Each case's queries are
# new plans whose generated code the JVM would compile (Janino, then the JIT) for a few rows;
# measured on 12 join/GROUP BY cases (local[2], C1): the JVM's CPU 41 -> 28 s, wall 42 -> 32 s.
# Adaptive query execution off too: on inputs of a few rows its re-planning after each stage
# is pure cost (changelog corpus, -n 2: the JVMs' CPU 129 -> 117 s, wall 92 -> 83 s); streaming
# micro-batches never use it. Spark's defaults (code generation, AQE on the batch side) still
# run where a test starts `twinflow run` (CLI, console and failed-run tests) and in the demo.
INTERPRETED = {"spark.sql.codegen.wholeStage": "false",
               "spark.sql.codegen.factoryMode": "NO_CODEGEN",
               "spark.sql.adaptive.enabled": "false"}


def cluster_jvm_options() -> str:
    """``JVM_OPTS`` for the cluster's daemons and executors, with the drivers' class-data
    archive where the drivers get it (jvm_archive.java_options): their class path is the
    drivers' (Spark's jars), so they load Spark's classes from it too."""
    from operators_lib.engine import jvm_archive

    return f"{JVM_OPTS} {jvm_archive.java_options(JVM_OPTS)}".strip()


def stop(procs: Iterable[subprocess.Popen], timeout: float) -> None:
    """Each process's group (started with ``start_new_session``) sent SIGTERM in the order
    given, then SIGKILL where it has not ended within ``timeout`` seconds."""
    procs = list(procs)
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)


def free_port() -> int:
    """A TCP port free on the loopback interface now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StandaloneCluster:
    """``with StandaloneCluster(dir) as url:`` a running cluster at ``url``
    (spark://127.0.0.1:PORT); its logs and the executors' work directories are under ``dir``."""

    def __init__(self, directory: Path, workers: int = 2, memory: str = "1g") -> None:
        self.dir, self.workers, self.memory = directory, workers, memory
        self.procs: list[subprocess.Popen] = []
        self.url = ""

    def _start(self, name: str, *args: str) -> Path:
        log = self.dir / f"{name}.log"
        env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_WORKER_DIR": str(
            self.dir / "work"), "SPARK_LOG_DIR": str(self.dir),
            # short-lived JVMs on two busy cores (as tests/conftest.py's drivers): C1 only,
            # and the drivers' class-data archive
            "SPARK_DAEMON_JAVA_OPTS": cluster_jvm_options()}
        with open(log, "wb") as fh:
            self.procs.append(subprocess.Popen(
                [str(SPARK_HOME / "bin" / "spark-class"), *args], stdout=fh,
                stderr=subprocess.STDOUT, env=env, start_new_session=True))
        return log

    def __enter__(self) -> str:
        self.dir.mkdir(parents=True, exist_ok=True)
        port = free_port()
        self.url = f"spark://127.0.0.1:{port}"
        self._start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                    "--port", str(port), "--webui-port", "0")
        logs = [self._start(f"worker-{i}", "org.apache.spark.deploy.worker.Worker",
                            "--host", "127.0.0.1", "--cores", "1", "--memory", self.memory,
                            "--webui-port", "0", self.url)
                for i in range(1, self.workers + 1)]
        deadline = time.monotonic() + READY_S
        while not all("Successfully registered with master" in p.read_text(errors="replace")
                      for p in logs):
            if time.monotonic() > deadline or any(p.poll() is not None for p in self.procs):
                self.__exit__()
                raise RuntimeError(f"the standalone cluster did not start: see {self.dir}")
            time.sleep(0.5)
        return self.url

    def __exit__(self, *exc: object) -> None:
        stop(reversed(self.procs), timeout=20)  # workers first: they stop their executors
        self.procs.clear()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, required=True)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    with StandaloneCluster(args.dir, args.workers) as url:
        print(url, flush=True)
        try:
            signal.pause()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
