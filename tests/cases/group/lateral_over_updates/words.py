"""A Python table function (a TableFunction) over a GROUP BY's updating rows."""

from pyflink.table import DataTypes
from pyflink.table.udf import TableFunction, udtf


class SplitWords(TableFunction):
    def eval(self, text):
        yield from ((w, len(w)) for w in (text or "").split())


split_words = udtf(SplitWords(), result_types=[DataTypes.STRING(), DataTypes.INT()])
