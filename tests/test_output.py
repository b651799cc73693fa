"""CSV output: every type as Flink prints it (the rendering rules checked with the Flink oracle
and written down in output.py), CSV quoting, and the file's bytes as written by Spark."""

from __future__ import annotations

from operators_lib.output import write_csv_frame, write_header
from operators_lib.types import FlinkType

# Each column's Flink type, and a SELECT giving rows that exercise its rendering.
TYPES = {"s": "STRING", "b": "BOOLEAN", "i": "INT", "d": "DOUBLE", "f": "FLOAT",
         "m": "DECIMAL(10, 3)", "ts": "TIMESTAMP(3)", "t0": "TIMESTAMP(0)", "tm": "TIME(3)",
         "dt": "DATE", "a": "ARRAY", "mp": "MAP", "r": "ROW"}
ROWS = """
SELECT 1 AS n, 'plain' AS s, true AS b, -7 AS i, CAST(20 AS DOUBLE) AS d,
       CAST(1.0E-3 AS FLOAT) AS f, CAST(-0.5 AS DECIMAL(10, 3)) AS m,
       TIMESTAMP'0099-01-02 03:04:05.120' AS ts, TIMESTAMP'2024-01-02 03:04:05.999' AS t0,
       CAST(TIME'10:11:12' AS TIME(3)) AS tm, DATE'2024-02-29' AS dt,
       array(1, NULL, 3) AS a, map('x', CAST(1.0E10 AS DOUBLE), 'y', NULL) AS mp,
       named_struct('f0', 1, 'f1', CAST(NULL AS STRING)) AS r
UNION ALL
SELECT 2, 'a,b "q"', false, NULL, CAST('NaN' AS DOUBLE), NULL, CAST(0 AS DECIMAL(10, 3)),
       NULL, NULL, CAST(TIME'10:11:12.05' AS TIME(3)), NULL, array(), NULL, NULL
UNION ALL
SELECT 3, 'two\nlines', NULL, 2147483647, CAST(1.0E-4 AS DOUBLE), NULL, NULL, NULL, NULL,
       NULL, NULL, NULL, NULL, NULL
UNION ALL
SELECT 4, '', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
"""


def test_every_type_is_written_as_flink_prints_it_and_quoted_where_needed(spark, tmp_path):
    types = {c: FlinkType.parse(t) if not t.startswith(("ARRAY", "MAP", "ROW")) else None
             for c, t in TYPES.items()}
    df = spark.sql(ROWS)
    for c in ("a", "mp", "r"):  # nested types come from constructors, typed by Spark
        types[c] = FlinkType.from_spark(df.schema[c].dataType)
    out = tmp_path / "out.csv"
    counts = write_csv_frame(df, out, types, list(TYPES), order=["n"])
    assert counts["rows"] == 4
    assert out.read_text().split("\n") == [
        "s,b,i,d,f,m,ts,t0,tm,dt,a,mp,r",
        'plain,TRUE,-7,20.0,0.001,-0.500,0099-01-02 03:04:05.120,2024-01-02 03:04:05,'
        '10:11:12.0,2024-02-29,"[1, NULL, 3]","{x=1.0E10, y=NULL}","(1, NULL)"',
        '"a,b ""q""",FALSE,,NaN,,0.000,,,10:11:12.05,,[],,',
        '"two', 'lines",,2147483647,1.0E-4,,,,,,,,,',
        ",,,,,,,,,,,,",
        ""]


def test_a_line_of_one_empty_field_is_quoted_and_a_header_alone_is_a_file(spark, tmp_path):
    out = tmp_path / "one.csv"
    write_csv_frame(spark.sql("SELECT 1 AS n, CAST(NULL AS STRING) AS s UNION ALL "
                              "SELECT 2, 'x\ry'"), out, {"s": FlinkType("STRING")}, ["s"],
                    order=["n"])
    # A lone empty field is "" (an empty line would read as no row); a carriage return quoted.
    assert out.read_bytes() == b's\n""\n"x\ry"\n'
    write_header(tmp_path / "late.csv", ["table", "row"])
    assert (tmp_path / "late.csv").read_bytes() == b"table,row\n"
