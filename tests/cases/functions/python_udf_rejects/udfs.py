"""A Python UDF that fails on some input rows (twinflow's reject mode sets them aside; Flink,
and twinflow by default, fail the job). Flink's results are over the rows it does not fail on."""

from pyflink.table import DataTypes
from pyflink.table.udf import udf


@udf(result_type=DataTypes.INT())
def parse_qty(s):
    """A quantity typed by hand: int('12a') raises ValueError."""
    return None if s is None else int(s)
