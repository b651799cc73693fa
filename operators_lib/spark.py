"""One SparkSession configuration for every job and test: local by default, RocksDB state."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pyspark is imported when a session is made: DAG files import LOG4J2_OPTION
    from pyspark.sql import SparkSession

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
# Warnings and errors only. A JVM option: it must be there when the driver JVM starts (pyspark
# passes builder options to the JVM it launches; spark-submit needs it on its command line).
LOG4J2 = Path(__file__).with_name("log4j2.properties")
LOG4J2_OPTION = f"-Dlog4j2.configurationFile={LOG4J2.as_uri()}"


def get_spark(master: str | None = None, app: str = "twinflow") -> SparkSession:
    """Create (or reuse) the session. ``master`` defaults to spark-submit's ``--master``, else
    $TWINFLOW_MASTER, else local[2]."""
    from pyspark.sql import SparkSession

    # Workers must run this interpreter (it has pandas/pyarrow/protobuf), not the system python3.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if master is None and os.environ.get("PYSPARK_GATEWAY_PORT"):
        master = ""  # launched by spark-submit: its --master decides
    elif master is None:
        master = os.environ.get("TWINFLOW_MASTER", "local[2]")
    builder = (
        SparkSession.builder.appName(app)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", os.environ.get("TWINFLOW_SHUFFLE_PARTITIONS", "2"))
        .config("spark.sql.streaming.stateStore.providerClass", ROCKSDB)
        .config("spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled", "true")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.driver.extraJavaOptions", LOG4J2_OPTION)
    )
    if master:
        builder = builder.master(master)
    return builder.getOrCreate()
