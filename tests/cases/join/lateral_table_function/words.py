"""Python table functions (@udtf) for LATERAL TABLE: a generator and a TableFunction."""

from pyflink.table import DataTypes
from pyflink.table.udf import TableFunction, udtf


@udtf(result_types=[DataTypes.STRING(), DataTypes.INT()])
def split_words(s):
    if s is None:
        return
    for w in s.split():
        yield w, len(w)


class Repeat(TableFunction):
    def eval(self, n):
        yield from range(n or 0)


upto = udtf(Repeat(), result_types=DataTypes.BIGINT())
