"""Reading CSV input (no Spark): what is a value, what is a rejected row, what stops the run."""

from __future__ import annotations

import math

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from operators_lib import ingest
from operators_lib.catalog import Column, TableDef, Watermark
from operators_lib.errors import InputError
from operators_lib.output import format_frame, result_frame
from operators_lib.plan import ROWNUM
from operators_lib.types import FlinkType

TABLE = TableDef("t", (Column("k", FlinkType("STRING")), Column("d", FlinkType("DOUBLE")),
                       Column("f", FlinkType("FLOAT")), Column("day", FlinkType("DATE")),
                       Column("ts", FlinkType("TIMESTAMP", 3))), Watermark("ts", 1000))
HEADER = b"k,d,f,day,ts\n"
ROW = b"a,1.5,1.5,2024-01-01,2024-01-01 00:00:01\n"


def _read(tmp_path, data: bytes):
    path = tmp_path / "t.csv"
    path.write_bytes(data)
    return ingest.read_csv(TABLE, path)


def test_a_row_with_invalid_utf8_is_rejected_and_the_rest_is_read(tmp_path):
    df, rejected = _read(tmp_path, HEADER + ROW + b"b\xff\xfe,2,2,2024-01-01,2024-01-01 00:00:02\n"
                         + ROW.replace(b"a,", b"c,"))
    assert list(df["k"]) == ["a", "c"]
    assert [(r.line, r.reason) for r in rejected] == [
        (3, "invalid UTF-8 in column k: byte(s) 0xff, 0xfe")]
    assert rejected[0].row == "b\ufffd\ufffd,2,2,2024-01-01,2024-01-01 00:00:02"


def test_a_field_longer_than_pythons_csv_limit_is_data(tmp_path):
    long = "x" * 200_000  # the csv module's default limit is 131,072 characters
    df, rejected = _read(tmp_path, HEADER + ROW.replace(b"a,", long.encode() + b","))
    assert rejected == [] and df["k"][0] == long


@pytest.mark.parametrize("header", [b"k,d,f,day,ts,d\n", b"k,D,f,day,ts,d\n"])
def test_a_column_named_twice_in_the_header_is_an_input_error(tmp_path, header):
    with pytest.raises(InputError, match=r"t\.csv: column\(s\) named more than once in the "
                                         r"header: [dD], d"):
        _read(tmp_path, header + ROW)


def test_a_byte_order_mark_before_the_header_is_not_part_of_it(tmp_path):
    df, rejected = _read(tmp_path, b"\xef\xbb\xbf" + HEADER + ROW)
    assert rejected == [] and list(df["k"]) == ["a"]


def test_floating_point_values_are_read_as_java_parses_them(tmp_path):
    """Flink's CSV format reads FLOAT / DOUBLE with Double.parseDouble (checked with the Flink
    oracle: NaN, [+-]Infinity, 0x1p3, 1.5d, ' 1e3 ', 1e400 are values; nan, inf, 1_0 fail)."""
    good = ["NaN", "-NaN", "Infinity", "+Infinity", "-Infinity", "0x1p3", "1.5d", " 1e3 ",
            "1e400", "1.", ".5", ""]
    rows = b"".join(f'a,"{v}",1,2024-01-01,2024-01-01 00:00:01\n'.encode() for v in
                    good + ["nan", "inf", "1_0", "Infinityd"])
    df, rejected = _read(tmp_path, HEADER + rows)
    d = df["d"]
    assert d.isna().tolist() == [False] * 11 + [True]  # NaN is a value; the empty field NULL
    values = d.tolist()
    assert all(math.isnan(v) for v in values[:2])
    assert values[2:11] == [math.inf, math.inf, -math.inf, 8.0, 1.5, 1000.0, math.inf, 1.0, 0.5]
    assert [r.reason for r in rejected] == [
        f"column d: {v!r} is not a valid DOUBLE" for v in ["nan", "inf", "1_0", "Infinityd"]]


def test_nan_and_infinity_are_staged_apart_from_null(spark, tmp_path):  # the JVM prints floats
    df, _ = _read(tmp_path, HEADER + b"a,NaN,-Infinity,2024-01-01,2024-01-01 00:00:01\n"
                  b"b,,,2024-01-01,2024-01-01 00:00:02\n")
    [path] = ingest.stage(TABLE, df, tmp_path / "staged", 10)
    staged = pq.read_table(path)
    assert [str(v) for v in staged["d"].to_pylist()] == ["nan", "None"]
    assert staged["f"].to_pylist() == [-math.inf, None]
    frame = result_frame(staged.select(["d", "f"]))
    assert format_frame(frame, {"d": FlinkType("DOUBLE"), "f": FlinkType("FLOAT")}) == [
        ["NaN", "-Infinity"], ["", ""]]


def test_every_valid_timestamp_and_date_is_read_and_staged(tmp_path):
    df, rejected = _read(tmp_path, HEADER
                         + b"a,1,1,0001-01-01,0001-01-01 00:00:00\n"
                         + b"b,1,1,9999-12-31,9999-12-31 23:59:59.999\n"
                         + b"c,1,1,2250-01-01,2250-01-01T00:00:00.1234567\n"
                         + b"d,1,1,0000-01-01,2024-01-01 00:00:00\n"
                         + b"e,1,1,2024-01-01,2024-02-30 00:00:00\n"
                         + b"f,1,1,2023-02-29,2024-01-01 00:00:00\n")
    assert [(r.line, r.reason) for r in rejected] == [
        (5, "column day: '0000-01-01' is not a valid DATE"),
        (6, "column ts: '2024-02-30 00:00:00' is not a valid TIMESTAMP(3)"),
        (7, "column day: '2023-02-29' is not a valid DATE")]
    [path] = ingest.stage(TABLE, df, tmp_path / "staged", 10)
    staged = pq.read_table(path)
    assert [str(v) for v in staged["day"].to_pylist()] == ["0001-01-01", "9999-12-31",
                                                           "2250-01-01"]
    assert staged["ts"].cast(pa.int64()).to_pylist() == [
        -62135596800000000, 253402300799999000, 8835955200123456]


def test_the_end_of_input_marker_holds_no_data_value(tmp_path):
    """End of input is a row kind (tw__rownum -1), not an event time: the stream planner turns
    it into a watermark past every valid time."""
    row = pq.read_table(ingest.write_eof(TABLE, tmp_path)).to_pylist()
    assert row == [{"k": None, "d": None, "f": None, "day": None, "ts": None, ROWNUM: -1}]


def test_a_time_before_1970_is_not_a_timer_spark_never_fires():
    from operators_lib.stream.event_time import timer_time

    assert timer_time(-62135596800000) == 1  # fires with the first watermark, as in Flink
    assert timer_time(253402300799999) == 253402300799999


def test_result_frames_keep_null_apart_from_nan():
    frame = result_frame(pa.table({"x": pa.array([float("nan"), None, 1.0]),
                                   "n": pa.array([1, None, 3])}))
    assert frame["x"].isna().tolist() == [False, True, False]
    assert frame["n"].isna().tolist() == [False, True, False]


def test_time_and_timestamp_ltz_values_are_read_staged_and_shown_as_flink_does(tmp_path):
    table = TableDef("u", (Column("tm", FlinkType.parse("TIME")),
                           Column("tm3", FlinkType.parse("TIME(3)")),
                           Column("tl", FlinkType.parse("TIMESTAMP_LTZ(3)")),
                           Column("t0", FlinkType.parse("TIMESTAMP(0)"))), None)
    path = tmp_path / "u.csv"
    path.write_text("tm,tm3,tl,t0\n"
                    "10:11:12.9,10:11:12.05,2024-01-01 10:00:00.123,2024-01-01 10:00:00.5\n"
                    "23:59:59,00:00:00,,\n"
                    "24:00:00,10:61:00,2024-13-01 00:00:00,x\n")
    df, rejected = ingest.read_csv(table, path)
    assert [r.line for r in rejected] == [4] and "TIME(0)" in rejected[0].reason
    [staged] = ingest.stage(table, df, tmp_path / "staged", 10)
    shown = format_frame(result_frame(pq.read_table(staged).drop([ROWNUM])),
                         {c.name: c.type for c in table.columns})
    # TIME(0) drops the fraction when read (Flink's CSV format); TIMESTAMP(0) keeps it and
    # only shows none.
    assert shown == [["10:11:12", "10:11:12.05", "2024-01-01 10:00:00.123", "2024-01-01 10:00:00"],
                     ["23:59:59", "00:00:00.0", "", ""]]
