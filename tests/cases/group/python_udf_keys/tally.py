"""Python UDFs for a GROUP BY: a key, an aggregate's argument and a filter computed by them."""

from pyflink.table import DataTypes
from pyflink.table.udf import udf


@udf(result_type=DataTypes.INT())
def vowels(s):
    return None if s is None else sum(ch in "aeiou" for ch in s.lower())


@udf(result_type=DataTypes.DOUBLE(), func_type="pandas")
def squared(x):
    return x * x
