"""How an Airflow task of a query reaches a store (``$TWINFLOW_HOME`` or an input on
``s3a://`` / ``hdfs://``) as the query's Spark steps do: the same Hadoop settings
(io/hadoop_conf.py: ``$HADOOP_CONF_DIR``, the AWS environment, the config's
``spark.hadoop.*``), and the credentials of the config's ``store_conn_id``, an Airflow
Connection whose login and password are the access key and the secret key. The spark-submit
steps get those as ``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` in their environment
(``store_environment``, set when the step runs), which Spark copies into its Hadoop
configuration: never on a command line or in a rendered template, and Airflow masks a
Connection's password in its logs."""

from __future__ import annotations

from pathlib import Path

from operators_lib.io import storage
from operators_lib.io.hadoop_conf import AWS_ENVIRONMENT, settings, store_from
from operators_lib.runs.query_config import QueryConfig


def configured(config_path: Path) -> QueryConfig:
    """The query's config, once this process reaches its stores; as ``QueryConfig.load``
    (the maintenance DAGs' choices, kept under ``$TWINFLOW_HOME``, laid over it)."""
    cfg = QueryConfig.read(config_path)
    found = settings(cfg.spark_conf)
    found |= {AWS_ENVIRONMENT[var]: value for var, value in store_environment(cfg).items()}
    storage.use(store_from(found.get))
    return cfg.with_choices()


def store_environment(cfg: QueryConfig) -> dict[str, str]:
    """The spark-submit step's environment for the config's ``store_conn_id`` (none without
    one), looked up when the step runs."""
    if not cfg.store_conn_id:
        return {}
    conn = _connection(cfg.store_conn_id)
    return {"AWS_ACCESS_KEY_ID": conn.login or "", "AWS_SECRET_ACCESS_KEY": conn.password or ""}


def _connection(conn_id: str):
    from airflow.sdk import Connection

    return Connection.get(conn_id)
