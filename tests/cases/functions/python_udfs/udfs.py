"""Python UDFs written for PyFlink, run unchanged by Flink (the expected results) and by
twinflow: a general function, a vectorized one, a class-based one, DECIMAL and BOOLEAN
results."""

from decimal import Decimal

from pyflink.table import DataTypes
from pyflink.table.udf import ScalarFunction, udf


@udf(result_type=DataTypes.BIGINT())
def count_char(s, c):
    """Nexmark q14's CountChar: how often ``c`` occurs in ``s``."""
    return None if s is None else s.count(c)


@udf(result_type=DataTypes.DOUBLE(), func_type="pandas")
def discounted(price, rate):
    return price * rate


class Initials(ScalarFunction):
    def eval(self, name):
        return None if name is None else "".join(w[0] for w in name.split())


initials = udf(Initials(), result_type=DataTypes.STRING())


@udf(result_type=DataTypes.DECIMAL(12, 2))
def with_tax(amount):
    return None if amount is None else (amount * Decimal("1.1")).quantize(Decimal("0.01"))


@udf(result_type=DataTypes.BOOLEAN())
def palindrome(s):
    return None if s is None else s == s[::-1]


@udf(result_type=DataTypes.INT())
def add_to(a, b=10):
    return None if a is None else a + b
