"""One SparkSession configuration for every job and test: local by default, RocksDB state.

The driver JVM gets ``-XX:+ExitOnOutOfMemoryError``: without it, an OutOfMemoryError in a
driver thread that nothing restarts (``task-result-getter``) leaves the job waiting forever.
JVM options only count where the JVM is launched: pyspark passes the builder's options to
spark-submit when it starts the JVM itself (``get_spark``), and jobs/dag_parts.py passes them
on the DAGs' spark-submit command line. They go in ``spark.driver.defaultJavaOptions``, which
Spark puts before ``spark.driver.extraJavaOptions``: a user's own options come later and win
(``SPARK_SUBMIT_OPTS`` comes before both).
This module imports pyspark only when called (the DAG files import it at parse time).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from operators_lib.errors import EngineError, TwinflowError, classify

if TYPE_CHECKING:  # pyspark is imported when a session is made: DAG files import these options
    from pyspark.sql import SparkSession

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
# Warnings and errors only. A JVM option: it must be there when the driver JVM starts (pyspark
# passes builder options to the JVM it launches; spark-submit needs it on its command line).
LOG4J2 = Path(__file__).resolve().with_name("log4j2.properties")  # absolute also in a zip
# Driver JVM options as defaults (spark.driver.defaultJavaOptions), so that a user's
# spark.driver.extraJavaOptions come after them and win: end a driver out of heap at once
# instead of hanging, and the log configuration.
DRIVER_JAVA_OPTIONS = (
    f"-XX:+ExitOnOutOfMemoryError -Dlog4j2.configurationFile={LOG4J2.as_uri()}")


def driver_java_options(user_options: str = "") -> str:
    """``DRIVER_JAVA_OPTIONS``, and the class-data archive's where it was built
    (jvm_archive.py) and the user's own JVM options (``user_options``: their
    spark.driver.extraJavaOptions) leave class-data sharing to twinflow: a driver starts in
    about half the time."""
    from operators_lib.engine import jvm_archive

    return f"{DRIVER_JAVA_OPTIONS} {jvm_archive.java_options(user_options)}".strip()


DRIVER_DIED = (
    "the Spark driver JVM died, most likely out of memory (see 'java.lang.OutOfMemoryError' "
    "above). Give the driver more heap where its JVM is launched, e.g. SPARK_DRIVER_MEMORY=8g "
    "or PYSPARK_SUBMIT_ARGS='--driver-memory 8g pyspark-shell' for twinflow run, "
    "spark-submit --driver-memory 8g, or \"spark_conf\": {\"spark.driver.memory\": \"8g\"} in "
    "a DAG's query config (setting spark.driver.memory in a running session has no effect)")


# twinflow's defaults: each applies only where the user (spark-submit --conf,
# spark-defaults.conf, ``twinflow run --conf``) set nothing.
DEFAULTS = {
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.streaming.stateStore.providerClass": ROCKSDB,
    "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    # PySpark's call-site capture: ~5 JVM round trips for every DataFrame function called while
    # a plan is built (half of the driver's round trips when planning; twinflow's errors name
    # the query's line themselves).
    "spark.python.sql.dataFrameDebugging.enabled": "false",
    # Checkpoint files through Hadoop's FileSystem API, not FileContext: FileContext's rename
    # asks for each path's link status, which Hadoop's local file system (without its native
    # library) gets from a `readlink` process: ~60 processes a micro-batch, ~900 of the ~1,400
    # a 15-micro-batch run started. A rename on a local or HDFS file system is atomic either way.
    "spark.sql.streaming.checkpointFileManagerClass":
        "org.apache.spark.sql.execution.streaming.checkpointing."
        "FileSystemBasedCheckpointFileManager",
}
# More defaults for a local master only (one machine, small data, no one at its UI): on a
# cluster the user's Spark defaults stay (its UI, its shuffle partitions).
LOCAL_DEFAULTS = {
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": os.environ.get("TWINFLOW_SHUFFLE_PARTITIONS", "2"),
    # One executor: nothing to wait for. A task that prefers the host of its HDFS block
    # (localhost, not the executor's address) was refused once and, with no timer to offer
    # it again in local mode, never ran: the job hung.
    "spark.locality.wait": "0",
}
# s3a's retries of a store that stopped answering (S3A's own, backing off, each around the
# AWS SDK's attempts) take minutes with Hadoop's defaults: bounded, so that a run whose store
# went away fails within about a minute. Set where neither the user's Hadoop files nor their
# spark.hadoop.* settings set them (``_bound_store_retries``).
STORE_RETRIES = {"fs.s3a.attempts.maximum": "2", "fs.s3a.retry.limit": "2",
                 "fs.s3a.retry.interval": "500ms", "fs.s3a.retry.throttle.limit": "5",
                 "fs.s3a.connection.establish.timeout": "5s"}
# What Flink's semantics need (a TIME(p) column type; a MAP[..] constructor and a JSON object
# keeping the last value of a repeated key): set whatever the user set.
REQUIRED = {"spark.sql.timeType.enabled": "true", "spark.sql.mapKeyDedupPolicy": "LAST_WIN",
            "spark.sql.variant.allowDuplicateKeys": "true"}


def get_spark(master: str | None = None, app: str = "twinflow",
              conf: dict[str, str] | None = None) -> SparkSession:
    """Create (or reuse) the session. ``master`` defaults to spark-submit's ``--master``, else
    $TWINFLOW_MASTER, else local[2]. Settings: the user's (spark-submit, spark-defaults.conf,
    then ``conf``, which wins), twinflow's ``DEFAULTS`` where they set nothing (and on a
    local master its ``LOCAL_DEFAULTS``), ``REQUIRED`` always. The JVM starts first
    (loading spark-defaults.conf, as spark-submit does), so that twinflow can see what the
    user set."""
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    from operators_lib.engine.reflection import remember_lookups
    from operators_lib.engine.shipping import is_local

    remember_lookups()
    # Workers must run this interpreter (it has pandas/pyarrow/protobuf), not the system python3.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    conf = dict(conf or {})
    submitted = bool(os.environ.get("PYSPARK_GATEWAY_PORT"))  # launched by spark-submit
    if master is None and not submitted:
        master = os.environ.get("TWINFLOW_MASTER", "local[2]")
    if master:
        conf["spark.master"] = master
    if SparkContext._jvm is None and not submitted:
        # JVM options count only at launch: given here, after spark-defaults.conf.
        launch = SparkConf(loadDefaults=False)
        launch.setAll([("spark.driver.defaultJavaOptions", driver_java_options(
                            conf.get("spark.driver.extraJavaOptions", ""))),
                       *store_classpath().items(), ("spark.app.name", app), *conf.items()])
        SparkContext._ensure_initialized(conf=launch)
    elif SparkContext._jvm is None:
        # spark-submit's JVM: connect to it first, or SparkConf() would not see its settings
        # and twinflow's defaults would override the user's --conf.
        SparkContext._ensure_initialized()
    settings = SparkConf()  # the JVM's: spark-submit's and spark-defaults.conf
    settings.setIfMissing("spark.app.name", app)
    local = is_local(conf.get("spark.master", settings.get("spark.master", "local")))
    for key, value in (DEFAULTS | LOCAL_DEFAULTS if local else DEFAULTS).items():
        settings.setIfMissing(key, value)
    for key, value in store_classpath().items():
        settings.setIfMissing(key, value)
    if local:  # a cluster's executors lack twinflow
        settings.setIfMissing("spark.python.daemon.module", "operators_lib.engine.worker_daemon")
    settings.setAll([*conf.items(), *REQUIRED.items()])
    with _python_processes(local):
        spark = SparkSession.builder.config(conf=settings).getOrCreate()
    _bound_store_retries(spark)
    _ship_code(spark)
    return spark


def _bound_store_retries(spark: SparkSession) -> None:
    """``STORE_RETRIES`` in the session's Hadoop configuration, each where only Hadoop's
    defaults (``*-default.xml``) set it."""
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    for key, value in STORE_RETRIES.items():
        sources = hadoop.getPropertySources(key)
        if sources is None or all(str(s).endswith("-default.xml") for s in sources):
            hadoop.set(key, value)


def store_classpath() -> dict[str, str]:
    """twinflow's jars (engine/stores.py: object-store connectors, Avro) as the driver's and
    the executors' default class path, which Spark puts before the user's
    ``extraClassPath``; none until they are fetched. Every driver twinflow launches gets
    them (the class-data archive is built with them: engine/jvm_archive.py)."""
    from operators_lib.engine.stores import classpath

    jars = classpath()
    return {f"spark.{side}.defaultExtraClassPath": jars
            for side in ("driver", "executor")} if jars else {}


@contextmanager
def _python_processes(local: bool) -> Iterator[None]:
    """On a local master, while a new SparkContext takes its Python executable from
    PYSPARK_PYTHON: this interpreter behind worker_daemon's launcher, so that Spark's Python
    processes import the installed pyspark (that module's docstring). Not where the user's
    PYSPARK_PYTHON names another interpreter."""
    from pyspark import SparkContext

    from operators_lib.engine.worker_daemon import python_launcher

    python = os.environ["PYSPARK_PYTHON"]
    launcher = None
    if local and SparkContext._active_spark_context is None and SparkContext._jvm is not None \
            and os.path.realpath(python) == os.path.realpath(sys.executable):
        launcher = python_launcher(
            SparkContext._jvm.org.apache.spark.api.python.PythonUtils.sparkPythonPath(),
            python, Path(sys.prefix) / "share" / "twinflow")
    if launcher is None:
        yield
        return
    os.environ["PYSPARK_PYTHON"] = str(launcher)
    try:
        yield
    finally:
        os.environ["PYSPARK_PYTHON"] = python


def _ship_code(spark: SparkSession) -> None:
    """On a cluster, executors import twinflow from its zip (shipping.py), unless spark-submit
    already shipped it (``--py-files``)."""
    from operators_lib.engine.shipping import code_archive, is_local
    from operators_lib.paths import local_dir

    context = spark.sparkContext
    if is_local(context.master):
        return
    archive = code_archive(local_dir() / "dist")
    if archive.name not in context.getConf().get("spark.submit.pyFiles", ""):
        context.addPyFile(str(archive))


@contextmanager
def session_conf(spark: SparkSession, settings: dict[str, str]) -> Iterator[None]:
    """Session settings for the duration of a block; what was set before is restored after."""
    before = {k: spark.conf.get(k, None) for k in settings}
    for k, v in settings.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)


@contextmanager
def engine_failures(where: Path | None = None) -> Iterator[None]:
    """Report the death of the driver JVM as an EngineError (exit 3, what to change) instead of
    the py4j error of whichever call noticed it first; a query failing on its data and a
    full disk or a denied permission as what they are (errors.classify: exit 2, exit 4)."""
    try:
        yield
    except Exception as e:
        if isinstance(e, TwinflowError):
            raise
        known = classify(e, str(where) if where else None)  # the data or the machine
        if known is not None:
            raise known from e
        if _jvm_alive():
            raise
        raise EngineError(DRIVER_DIED) from e


def _jvm_alive() -> bool:
    from pyspark import SparkContext

    jvm = SparkContext._jvm
    if jvm is None:
        return True  # no session was started: whatever failed, it was not the JVM
    try:
        jvm.java.lang.System.currentTimeMillis()
    except Exception:  # py4j cannot reach the JVM: connection refused / closed
        return False
    return True
