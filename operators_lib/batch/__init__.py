"""Plan -> Spark DataFrame over the bounded input (Spark SQL window functions)."""

from operators_lib.batch.planner import batch_dataframe

__all__ = ["batch_dataframe"]
