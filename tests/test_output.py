"""CSV output: every type as Flink prints it (the rendering rules checked with the Flink oracle
and written down in output.py), CSV quoting, the file's bytes as written by Spark, and the
changelog copied from its parts in place order."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from operators_lib.errors import StateError
from operators_lib.io import output
from operators_lib.io.output import write_csv_frame, write_header
from operators_lib.plan import EMIT_TS, LINE, OP, ROWNUM, SEQ
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


def test_files_written_atomically_get_a_new_files_permissions(tmp_path):
    """mkstemp's 0600 would hide published results and reports from another user."""
    umask = os.umask(0o022)
    try:
        output.write_json(tmp_path / "r.json", {"a": 1})
        write_header(tmp_path / "h.csv", ["a"])
        with output.replacing([(tmp_path / "x", None)], mode=0o755) as (out,):
            out.write(b"#!/bin/sh\n")
    finally:
        os.umask(umask)
    modes = {f.name: f.stat().st_mode & 0o777 for f in tmp_path.iterdir()}
    assert modes == {"r.json": 0o644, "h.csv": 0o644, "x": 0o755}


def test_a_frame_of_many_partitions_is_written_in_its_order(spark, tmp_path):
    """Rows over five partitions, ordered by a string and a struct (NULLs first, as Spark's
    ascending order): the file is in that order."""
    df = spark.range(300).repartition(5).selectExpr(
        "id", "CASE WHEN id % 7 = 0 THEN NULL ELSE CAST(id % 3 AS STRING) END AS t",
        "named_struct('a', CASE WHEN id % 11 = 0 THEN NULL ELSE id % 5 END, 'b', -id) AS p")
    out = tmp_path / "out.csv"
    counts = write_csv_frame(df, out, {"id": FlinkType("BIGINT")}, ["id"], order=["t", "p"])

    def key(i: int) -> tuple:
        t = None if i % 7 == 0 else str(i % 3)
        a = None if i % 11 == 0 else i % 5
        return (t is not None, t or "", a is not None, a or 0, -i)

    assert counts["rows"] == 300
    assert out.read_text().splitlines() == ["id", *map(str, sorted(range(300), key=key))]


def _changelog_part(path: Path, rows: list[tuple], line: bool = True) -> None:
    """A changelog part as the stream's sink writes it: sorted by (emit time, input row,
    sequence number), NULL first."""
    names = [EMIT_TS, ROWNUM, SEQ, OP, LINE]
    table = pa.table(dict(zip(names, map(list, zip(*rows)))), schema=pa.schema(
        [(EMIT_TS, pa.int64()), (ROWNUM, pa.int64()), (SEQ, pa.int64()), (OP, pa.string()),
         (LINE, pa.string())]))
    table = table.sort_by([(c, "ascending", "at_start") for c in (EMIT_TS, ROWNUM, SEQ)])
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table if line else table.drop_columns([LINE]), path)


@pytest.mark.parametrize("kinds", [["+I", "-U", "+U", "-D", "LATE"], ["+I", "+U", "LATE"]])
def test_copy_changelog_merges_each_batchs_parts_in_place_order(tmp_path, monkeypatch, kinds):
    """Random micro-batches of three parts each (interleaved keys, NULL emit times, markers),
    read a few rows at a time: the copy is the rows sorted by their place, markers counted
    and left out; the added rows' lines too, where nothing is retracted (else a start of
    them: the caller computes the result)."""
    monkeypatch.setattr(output, "_READ_ROWS", 3)
    rng = random.Random(7)
    batches, everything = [], []
    for b in range(4):
        batch = tmp_path / f"batch-{b:08d}"
        for part in range(3):
            rows = []
            for i in range(rng.randrange(0, 12)):
                seq = (part << 33) + i
                kind = rng.choice(kinds)
                text = None if kind == "LATE" else f"r{b}.{part}.{i}\n"
                rows.append((rng.choice([None, 5, 6, 7]), rng.randrange(4), seq, kind, text))
            if rows:
                _changelog_part(batch / f"part-{part:05d}-x.parquet", rows)
                everything += [(b, *r) for r in rows]
        batches.append(batch)
    counts = output.copy_changelog(batches, (tmp_path / "changelog.csv", ["op", "x"]),
                                   (tmp_path / "added.csv", ["x"]))
    low = -(2**63)
    placed = sorted(everything, key=lambda r: (r[0], low if r[1] is None else r[1], r[2], r[3]))
    kept = [r for r in placed if r[5] is not None]
    assert (tmp_path / "changelog.csv").read_text() == "op,x\n" + "".join(
        f"{r[4]},{r[5]}" for r in kept)
    added = "x\n" + "".join(r[5] for r in kept if r[4] in ("+I", "+U"))
    if "-D" in kinds:
        assert added.startswith((tmp_path / "added.csv").read_text()) and counts["-U"]
    else:
        assert (tmp_path / "added.csv").read_text() == added
    assert counts["rows"] == len(kept)
    assert counts["LATE"] == sum(r[4] == "LATE" for r in placed)
    assert counts["-D"] == sum(r[4] == "-D" for r in placed)


def test_copy_changelog_refuses_a_changelog_without_lines(tmp_path):
    _changelog_part(tmp_path / "batch-00000000" / "part-00000.parquet",
                    [(1, 0, 0, "+I", "a\n")], line=False)
    with pytest.raises(StateError, match="earlier layout"):
        output.copy_changelog([tmp_path / "batch-00000000"], (tmp_path / "c.csv", ["op"]))
    assert not (tmp_path / "c.csv").exists()
