"""Reading CSV input: what is a value, what is a rejected row, what stops the run (the parsing
kernel, no Spark), and the executors' parsing and staging (Spark)."""

from __future__ import annotations

import csv
import math
import random
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

from operators_lib.catalog import Column, TableDef, Watermark
from operators_lib.errors import InputError
from operators_lib.io import csv_parse, csv_split, ingest
from operators_lib.io.formats import Format
from operators_lib.io.output import csv_line
from operators_lib.plan import ROWNUM
from operators_lib.types import FlinkType

TABLE = TableDef("t", (Column("k", FlinkType("STRING")), Column("d", FlinkType("DOUBLE")),
                       Column("f", FlinkType("FLOAT")), Column("day", FlinkType("DATE")),
                       Column("ts", FlinkType("TIMESTAMP", 3))), Watermark("ts", 1000))
HEADER = b"k,d,f,day,ts\n"
ROW = b"a,1.5,1.5,2024-01-01,2024-01-01 00:00:01\n"


def _read(tmp_path, data: bytes, table: TableDef = TABLE):
    """(typed rows as pandas, rejected rows) of one file, as a task parses it."""
    path = tmp_path / "t.csv"
    path.write_bytes(data)
    good, rejected = csv_parse.parse_records(table, csv_parse.read_header(table, path), data,
                                                1, True)
    # Floats in pandas' nullable dtype: NULL is NA, NaN a value.
    return good.to_pandas(types_mapper={pa.float64(): pd.Float64Dtype(),
                                        pa.float32(): pd.Float32Dtype()}.get), rejected


def _shown(spark, staged: Path, types: dict[str, FlinkType]) -> list[list[str]]:
    """The staged rows' fields as the CSV output prints them (in input order)."""
    rows = spark.read.parquet(str(staged)).orderBy(ROWNUM).select(
        [csv_line([(F.col(c), t)]).alias(c) for c, t in types.items()]).collect()
    return [[next(csv.reader([v[:-1]]), [""])[0] for v in r] for r in rows]


def _stage(spark, tmp_path, data: bytes, table: TableDef = TABLE) -> Path:
    """The one micro-batch file of one CSV file, parsed and staged by the executors."""
    path = tmp_path / f"{table.name}.csv"
    path.write_bytes(data)
    parsed = ingest.parse(spark, {table.name: ingest.TableInput(table, [path])},
                          tmp_path / "parsed")
    [staged] = ingest.stage(spark, parsed, table.name, tmp_path / "staged", 10)
    return staged


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
    staged = pq.read_table(_stage(spark, tmp_path, HEADER + b"a,NaN,-Infinity,2024-01-01,"
                                  b"2024-01-01 00:00:01\nb,,,2024-01-01,2024-01-01 00:00:02\n"))
    assert [str(v) for v in staged["d"].to_pylist()] == ["nan", "None"]
    assert staged["f"].to_pylist() == [-math.inf, None]
    assert _shown(spark, tmp_path / "staged", {"d": FlinkType("DOUBLE"), "f": FlinkType("FLOAT")}
                  ) == [["NaN", "-Infinity"], ["", ""]]


def test_every_valid_timestamp_and_date_is_read_and_staged(spark, tmp_path):
    data = (HEADER
                         + b"a,1,1,0001-01-01,0001-01-01 00:00:00\n"
                         + b"b,1,1,9999-12-31,9999-12-31 23:59:59.999\n"
                         + b"c,1,1,2250-01-01,2250-01-01T00:00:00.1234567\n"
                         + b"d,1,1,0000-01-01,2024-01-01 00:00:00\n"
                         + b"e,1,1,2024-01-01,2024-02-30 00:00:00\n"
            + b"f,1,1,2023-02-29,2024-01-01 00:00:00\n")
    _, rejected = _read(tmp_path, data)
    assert [(r.line, r.reason) for r in rejected] == [
        (5, "column day: '0000-01-01' is not a valid DATE"),
        (6, "column ts: '2024-02-30 00:00:00' is not a valid TIMESTAMP(3)"),
        (7, "column day: '2023-02-29' is not a valid DATE")]
    staged = pq.read_table(_stage(spark, tmp_path, data))
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


def test_time_and_timestamp_ltz_values_are_read_staged_and_shown_as_flink_does(spark, tmp_path):
    table = TableDef("u", (Column("tm", FlinkType.parse("TIME")),
                           Column("tm3", FlinkType.parse("TIME(3)")),
                           Column("tl", FlinkType.parse("TIMESTAMP_LTZ(3)")),
                           Column("t0", FlinkType.parse("TIMESTAMP(0)"))), None)
    data = (b"tm,tm3,tl,t0\n"
            b"10:11:12.9,10:11:12.05,2024-01-01 10:00:00.123,2024-01-01 10:00:00.5\n"
            b"23:59:59,00:00:00,,\n"
            b"24:00:00,10:61:00,2024-13-01 00:00:00,x\n")
    _, rejected = _read(tmp_path, data, table)
    assert [r.line for r in rejected] == [4] and "TIME(0)" in rejected[0].reason
    _stage(spark, tmp_path, data, table)
    shown = _shown(spark, tmp_path / "staged", {c.name: c.type for c in table.columns})
    # TIME(0) drops the fraction when read (Flink's CSV format); TIMESTAMP(0) keeps it and
    # only shows none.
    assert shown == [["10:11:12", "10:11:12.05", "2024-01-01 10:00:00.123", "2024-01-01 10:00:00"],
                     ["23:59:59", "00:00:00.0", "", ""]]


def test_a_file_is_cut_at_newlines_after_its_ranges_starts_with_its_line_numbers():
    """Random files read in random range sizes: the pieces cover the file, each starts after a
    newline, with the right line number; a quote or a bare carriage return: one piece."""
    rng = random.Random(7)
    for trial in range(2000):
        alphabet = [b"a", b",", b"\n", b"\n", b"\r\n"] + [b'"'] * (trial % 5 == 0) + [
            b"\r"] * (trial % 7 == 0)
        data = b"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 300)))
        size = rng.randint(1, 40)
        scans = [csv_split.scan_range(data[max(s - 1, 0):e], s, e)
                 for s, e in csv_split.ranges(len(data), size)]
        pieces = csv_split.plan_pieces(len(data), scans)
        # a range scanned in chunks (the driver's way: ingest.DRIVER_SCAN_BYTES) scans the same
        chunk = rng.randint(1, 10)
        assert [csv_split.joined([csv_split.scan_range(data[max(a - 1, 0):b], a, b)
                                  for a, b in csv_split.ranges(e - s, chunk, s)])
                for s, e in csv_split.ranges(len(data), size)] == scans
        assert b"".join(data[p.start:p.end] for p in pieces) == data
        assert all(p.start == 0 or data[p.start - 1] == ord("\n") for p in pieces)
        assert [p.first_line for p in pieces] == [1 + data.count(b"\n", 0, p.start)
                                                   for p in pieces]
        if b'"' in data or data.count(b"\r") != data.count(b"\r\n"):
            assert len(pieces) == 1


@pytest.mark.parametrize("driver_scan_bytes", [0, ingest.DRIVER_SCAN_BYTES])
def test_pieces_and_files_are_numbered_in_file_then_line_order(spark, tmp_path, monkeypatch,
                                                               driver_scan_bytes):
    """A table given as a directory of files, cut into pieces parsed by different tasks: arrival
    numbers follow file order, then line, rejected rows keep their file and line, and each
    micro-batch file holds the next N accepted rows (or of its input file). Where the files may
    be cut is found by the executors (large input) or by the driver (small)."""
    monkeypatch.setattr(ingest, "DRIVER_SCAN_BYTES", driver_scan_bytes)
    src = tmp_path / "in"
    src.mkdir()
    expected, bad = [], []
    for f, n in (("a.csv", 40), ("b.csv", 3), ("c.csv", 25)):
        lines = [b"k,d,f,day,ts\n"]
        for i in range(n):
            if i % 7 == 3:
                lines.append(b"x,notanumber,1,2024-01-01,2024-01-01 00:00:01\n")
                bad.append((f, i + 2))
            else:
                lines.append(b"%s%d,%d,1,2024-01-01,2024-01-01 00:00:01\n" % (f[:1].encode(),
                                                                              i, i))
                expected.append(f"{f[:1]}{i}")
        if f == "c.csv":  # quoted: read as one piece
            lines.append(b'"c,quoted",1,1,2024-01-01,2024-01-01 00:00:01\n')
            expected.append("c,quoted")
        (src / f).write_bytes(b"".join(lines))
    parsed = ingest.parse(spark, {"t": ingest.TableInput(TABLE, sorted(src.glob("*.csv")))},
                          tmp_path / "parsed", piece_bytes=200)
    assert len(parsed.pieces) > 6 and parsed.rows("t") == len(expected)
    assert [(f.path.name, good, rejected) for f, good, rejected in parsed.per_file("t")] == [
        ("a.csv", 34, 6), ("b.csv", 3, 0), ("c.csv", 22, 4)]
    ingest.write_rejected(parsed, tmp_path / "rejected.csv")
    with open(tmp_path / "rejected.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [(Path(r["file"]).name, int(r["line"])) for r in rows] == bad
    assert rows[0]["reason"] == "column d: 'notanumber' is not a valid DOUBLE"
    files = ingest.stage(spark, parsed, "t", tmp_path / "staged", 9, first_rownum=100,
                         first_part=5)
    assert [f.name for f in files] == [f"part-{k:06d}.parquet" for k in range(5, 12)]
    staged = [pq.read_table(f) for f in files]
    assert [t.num_rows for t in staged] == [9] * 6 + [len(expected) - 54]
    rows = pa.concat_tables(staged)
    assert rows[ROWNUM].to_pylist() == list(range(100, 100 + len(expected)))
    assert rows["k"].to_pylist() == expected
    # A scheduled run's files each start a micro-batch.
    files = ingest.stage(spark, parsed, "t", tmp_path / "by_file", 9, file_batches=True)
    assert [pq.read_metadata(f).num_rows for f in files] == [9, 9, 9, 7, 3, 9, 9, 4]
    assert pa.concat_tables(map(pq.read_table, files))[ROWNUM].to_pylist() == list(
        range(len(expected)))


def test_parsed_and_staged_in_this_process_as_by_the_executors(spark, tmp_path):
    """``spark`` None (the tests' plan-level runs, tests/planlevel.py): the same task functions
    run in this process; pieces, rejected rows and staged parts (end markers included) are
    the executors'."""
    src = tmp_path / "in"
    src.mkdir()
    for f, n in (("a.csv", 30), ("b.csv", 4)):
        (src / f).write_bytes(HEADER + b"".join(
            b"x,nan?,1,2024-01-01,2024-01-01 00:00:01\n" if i % 5 == 2 else
            b"%s%d,%d.5,NaN,2024-01-01,2024-01-01 00:00:%02d\n" % (f[:1].encode(), i, i, i)
            for i in range(n)))
    out = {}
    for where, session in (("spark", spark), ("local", None)):
        parsed = ingest.parse(session, {"t": ingest.TableInput(TABLE, sorted(src.glob("*.csv")))},
                              tmp_path / where / "parsed", piece_bytes=200)
        ingest.write_rejected(parsed, tmp_path / where / "rejected.csv")
        files = ingest.stage(session, parsed, "t", tmp_path / where / "staged", 7,
                             end_markers=3)
        out[where] = (parsed.pieces, parsed.digest(), parsed.nonfinite(),
                      (tmp_path / where / "rejected.csv").read_text().replace(where, ""),
                      [f.name for f in files],
                      [repr(pq.read_table(f).to_pylist()) for f in files])  # NaN == NaN
    assert len(out["local"][0]) > 3 and out["local"] == out["spark"]


def test_the_driver_does_no_row_work(spark, tmp_path):
    """200,000 rows (~9 MB of CSV) are parsed and staged while the driver's Python allocates
    less than 1 MB at its peak (tracemalloc traces this process only): the rows live in the
    executors' Python workers and the JVM."""
    import tracemalloc

    path = tmp_path / "t.csv"
    with path.open("wb") as fh:
        fh.write(HEADER)
        fh.writelines(b"key%d,%d.5,1.5,2024-01-01,2024-01-01 00:00:%02d\n" % (i, i, i % 60)
                      for i in range(200_000))
    tracemalloc.start()
    try:
        parsed = ingest.parse(spark, {"t": ingest.TableInput(TABLE, [path])}, tmp_path / "parsed")
        files = ingest.stage(spark, parsed, "t", tmp_path / "staged", 50_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert parsed.rows("t") == 200_000 and len(files) == 4
    assert peak < 1 << 20, f"the driver allocated {peak:,} bytes"


def test_the_input_digest_is_the_tasks_and_follows_every_byte(spark, tmp_path):
    """A stopped stream resumes only on the same input (runs/staging._fingerprint): the digest the
    tasks compute of what they read changes with one byte of a file cut in pieces."""
    path = tmp_path / "t.csv"
    rows = [b"key%d,%d.5,1.5,2024-01-01,2024-01-01 00:00:01\n" % (i, i) for i in range(40)]
    path.write_bytes(HEADER + b"".join(rows))

    def digest() -> tuple[str, int]:
        parsed = ingest.parse(spark, {"t": ingest.TableInput(TABLE, [path])},
                              tmp_path / "parsed", piece_bytes=300)
        return parsed.digest(), len(parsed.pieces)

    first, pieces = digest()
    assert pieces > 3 and digest()[0] == first
    path.write_bytes(HEADER + b"".join(rows).replace(b"key17,", b"key18,"))
    assert digest()[0] != first


def test_plain_pieces_read_by_arrow_equal_the_general_path():
    """Random plain pieces (values in the forms the fast path takes, and some it does not)
    give the same typed rows by Arrow's reader and kernels as by the general path; a piece the
    fast path declines is read by the general path."""
    table = TableDef("p", (Column("i", FlinkType("INT")), Column("b", FlinkType("BIGINT")),
                           Column("d", FlinkType("DOUBLE")), Column("f", FlinkType("FLOAT")),
                           Column("s", FlinkType("STRING")), Column("day", FlinkType("DATE")),
                           Column("ts", FlinkType("TIMESTAMP", 3))), Watermark("ts", 0))
    names = ("i", "b", "d", "f", "s", "day", "ts")
    rng = random.Random(11)
    taken = declined = 0
    for _ in range(60):
        rows = []

        def pick(plain: list[str], other: list[str]) -> str:
            return rng.choice(other if rng.random() < 0.01 else plain)

        for _ in range(rng.randint(1, 40)):
            rows.append(",".join([
                pick(["", str(rng.randint(-2**31, 2**31 - 1)), "-0", "007"], ["+5", "2147483648"]),
                pick(["", str(rng.randint(-10**18 + 1, 10**18 - 1))], ["12345678901234567890"]),
                pick(["", repr(rng.uniform(-1e9, 1e9)), "1.", ".5", "+.5", "1e400",
                      f"{rng.random():.3e}", "-0"], [" 1", "NaN", "0x1p3"]),
                pick(["", "3.4028235e38", "1e-50", repr(rng.random())], ["1f"]),
                pick(["", "x", "a b", "é", "NULL"], ['"q"']),
                pick(["", "2024-02-29", "0001-01-01", "9999-12-31"], ["2023-02-29", "0000-01-01"]),
                pick(["2024-01-01 00:00:00", "2024-01-01T10:11:12.1234567",
                      "9999-12-31 23:59:59.999"], ["0000-01-01 00:00:00", "2024-01-01 24:00:00",
                                                   ""]),
            ]))
        data = ("\n".join(["i,b,d,f,s,day,ts", *rows]) + "\n").encode()
        general, rejected = csv_parse.general_records(table, names, data, 1, True)
        fast = csv_parse._fast_records(table, names, data, True)
        if fast is None:
            declined += 1
            continue
        taken += 1
        assert rejected == []
        assert fast.equals(general), (data, fast.to_pylist(), general.to_pylist())
    assert taken >= 5 and declined >= 5, (taken, declined)


def test_json_lines_are_cut_at_any_newline_whatever_their_quotes(tmp_path):
    """A JSON value holds no newline: a file of quoted strings is cut into pieces (a CSV file
    with a quote is one piece), and every line is read once, in order, with its number."""
    path = tmp_path / "t.json"
    lines = [f'{{"k": "k{i}, \\"q\\"", "d": {i}.5}}' for i in range(40)]
    lines[17] = "not json"
    path.write_text("\n".join(lines) + "\n")
    table = TableDef("t", TABLE.columns[:2])
    parsed = ingest.parse(None, {"t": ingest.TableInput(table, [path], Format("json"))},
                          tmp_path / "parsed", piece_bytes=150)
    assert len(parsed.pieces) > 5 and parsed.rows("t") == 39 and parsed.rejected("t") == 1
    rows = pa.concat_tables(ingest._read_rows(parsed.rows_file("t", 0, p.piece))
                            for p in parsed.pieces).to_pylist()
    assert [r["k"] for r in rows] == [f'k{i}, "q"' for i in range(40) if i != 17]
    ingest.write_rejected(parsed, tmp_path / "rejected.csv")
    (bad,) = list(csv.DictReader(open(tmp_path / "rejected.csv")))
    assert (bad["line"], bad["reason"][:8]) == ("18", "not JSON")
