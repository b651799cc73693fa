"""Where twinflow may read and write: local paths that the driver and every executor see at the
same place. On a cluster that means a shared file system mounted at the same path on every
host (NFS, EFS, a Kubernetes volume; docker/ mounts one volume). Object-store and HDFS URIs
are not supported yet (docs/design/uri_state.md says why and what it takes).

Both checks turn what would otherwise be a wrong result into exit 2. Without them a URI such
as ``s3a://bucket/out`` became a local directory ``s3a:/bucket/out``, and on a cluster whose
executors write to their own disks the driver would commit micro-batches whose rows it never
sees: an empty changelog, not an error.
"""

from __future__ import annotations

import re
import socket
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from operators_lib.engine.shipping import is_local
from operators_lib.errors import InputError

if TYPE_CHECKING:  # the CLI checks paths before it imports pyspark
    from pyspark.sql import SparkSession

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:/")
SEE = "docs/design/uri_state.md"


def local_path(path: Path | str, what: str) -> Path:
    """``path`` as a local path, or InputError if it is a URI (``what``: what it is for,
    which must be local: the demo's output, a query config's SQL files)."""
    text = str(path)
    if _SCHEME.match(text):
        text = re.sub(r"^([^:/]+:)/(?!/)", r"\1//", text)  # as given (a Path keeps one slash)
        raise InputError(f"{what} {text!r} is a URI: it must be a local path")
    return Path(path)


def _sees(token: str, expected: str) -> tuple[str, bool]:
    try:
        with open(token) as fh:
            return socket.gethostname(), fh.read() == expected
    except OSError:
        return socket.gethostname(), False


def check_shared(spark: SparkSession, directory: Path, force: bool = False) -> None:
    """On a cluster (``force``: also in local mode), prove that executors see ``directory`` as
    the driver does: the driver writes a token there, tasks (two per core, so normally on every
    executor) read it back. InputError names the hosts that do not see it."""
    local = is_local(spark.sparkContext.master)
    if local and not force:
        return  # the executors are the driver's threads
    directory.mkdir(parents=True, exist_ok=True)
    expected = uuid.uuid4().hex
    # The path as Spark writes it (symbolic links not followed: they may differ per host).
    token = directory.absolute() / f".twinflow-shared-{expected}"
    try:
        token.write_text(expected)
        if not local:
            _await_executors(spark)
        blind = blind_hosts(spark, token, expected)
    finally:
        token.unlink(missing_ok=True)
    if blind:
        raise InputError(
            f"executors on {', '.join(blind)} do not see {directory} as the driver does: "
            f"twinflow's state and outputs must be on a file system mounted at the same path "
            f"on the driver and every executor ({SEE})")


def _await_executors(spark: SparkSession, timeout_s: float = 60) -> None:
    """Until an executor has registered (a cluster starts its session without them, and the
    tasks of the check would all go to the first one); at most ``timeout_s``."""
    tracker = spark.sparkContext._jsc.sc().statusTracker()
    deadline = time.monotonic() + timeout_s
    while len(tracker.getExecutorInfos()) < 2 and time.monotonic() < deadline:  # + the driver
        time.sleep(0.5)


def blind_hosts(spark: SparkSession, token: Path, expected: str) -> list[str]:
    """The hosts of tasks (two per core, at most 1,000) that cannot read ``expected`` from
    ``token``."""
    tasks = min(1000, max(2, 2 * spark.sparkContext.defaultParallelism))
    path = str(token)
    seen = spark.sparkContext.parallelize(range(tasks), tasks).map(
        lambda _: _sees(path, expected)).collect()
    return sorted({host for host, ok in seen if not ok})
