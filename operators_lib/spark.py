"""One SparkSession configuration for every job and test: local by default, RocksDB state."""

from __future__ import annotations

import os
import sys

from pyspark.sql import SparkSession

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"


def get_spark(master: str | None = None, app: str = "twinflow") -> SparkSession:
    """Create (or reuse) the session. ``master`` defaults to spark-submit's ``--master``, else
    $TWINFLOW_MASTER, else local[2]."""
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
        .config("spark.driver.extraJavaOptions", "-Dlog4j2.level=ERROR")
    )
    if master:
        builder = builder.master(master)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
