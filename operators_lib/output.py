"""CSV output in Flink's rendering: header row, NULL as an empty field, timestamps
``YYYY-MM-DD HH:MM:SS.fff`` with the type's fraction digits, TIME ``HH:MM:SS[.f]``, doubles as
Java prints them (``20.0``), decimals at their scale, ``[1, NULL]`` for an ARRAY, ``{a=1, b=2}``
for a MAP (in its keys' order), ``(a, 1)`` for a ROW (a NULL inside them is ``NULL``)."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame, Observation
from pyspark.sql import functions as F

from operators_lib.types import NESTED, FlinkType, java_double

_NULLABLE_FLOATS = {pa.float64(): pd.Float64Dtype(), pa.float32(): pd.Float32Dtype()}


def result_frame(table: pa.Table) -> pd.DataFrame:
    """Query results as pandas with NULL kept apart from NaN: floating-point columns in pandas'
    nullable dtypes (NULL is NA, NaN a value); elsewhere ``isna()`` marks NULL, as usual. An
    integer column with NULLs holds Python ints (as float64 a BIGINT past 2^53 would change).
    An ARRAY, MAP or ROW column holds Python lists, (key, value) lists and dicts, NULL kept
    apart from NaN inside them too."""
    df = table.to_pandas(types_mapper=_NULLABLE_FLOATS.get, integer_object_nulls=True)
    for name, column in zip(table.column_names, table.columns):
        if pa.types.is_nested(column.type):
            df[name] = pd.Series(column.to_pylist(), dtype=object, index=df.index)
    return df


def formatter(t: FlinkType) -> Callable[[object], str]:
    if t.name == "DOUBLE":
        return lambda v: java_double(float(v))
    if t.name == "FLOAT":
        return lambda v: java_double(float(str(np.float32(v))))
    if t.is_integral:
        return lambda v: str(int(v))
    if t.name == "DECIMAL":
        return lambda v: format(Decimal(v).quantize(Decimal(1).scaleb(-t.scale)), "f")
    if t.name == "BOOLEAN":
        return lambda v: "TRUE" if v else "FALSE"
    if t.is_timestamp:
        return lambda v: _timestamp(v, t.precision)
    if t.name == "TIME":
        return lambda v: _time(v, t.precision)
    if t.name == "DATE":
        return lambda v: v.isoformat() if isinstance(v, dt.date) else str(v)[:10]
    if t.name in NESTED:
        return _nested(t)
    return str


def _timestamp(v, precision: int) -> str:
    ts = pd.Timestamp(v)
    if ts.tzinfo is not None:
        ts = ts.tz_convert("UTC").tz_localize(None)
    # %Y does not pad years before 1000 to four digits
    text = f"{ts.year:04d}-" + ts.strftime("%m-%d %H:%M:%S")
    return f"{text}.{ts.microsecond:06d}"[:20 + precision] if precision else text


def _time(v: dt.time, precision: int) -> str:
    """Flink prints a TIME(p > 0) with its milliseconds' trailing zeros cut, at least one digit:
    10:11:12.5, 10:11:12.05, 10:11:12.0."""
    text = v.strftime("%H:%M:%S")
    return f"{text}.{f'{v.microsecond // 1000:03d}'.rstrip('0') or '0'}" if precision else text


def _nested(t: FlinkType) -> Callable[[object], str]:
    parts = [formatter(a) for a in t.args]

    def show(f: Callable[[object], str], v) -> str:
        return "NULL" if v is None else f(v)

    if t.name == "ARRAY":
        return lambda v: "[" + ", ".join(show(parts[0], e) for e in v) + "]"
    if t.name == "MAP":
        return lambda v: "{" + ", ".join(
            f"{show(parts[0], k)}={show(parts[1], x)}"
            for k, x in (v.items() if isinstance(v, dict) else v)) + "}"
    return lambda v: "(" + ", ".join(
        show(f, e) for f, e in zip(parts, v.values() if isinstance(v, dict) else v)) + ")"


def format_frame(df: pd.DataFrame, types: dict[str, FlinkType]) -> list[list[str]]:
    cols = list(format_columns(df, types).values())
    return [list(r) for r in zip(*cols)] if cols else []


def format_columns(df: pd.DataFrame, types: dict[str, FlinkType]) -> dict[str, list[str]]:
    """Each column's values as Flink prints them, NULL as ''."""
    cols = {}
    for c in df.columns:
        t = types.get(c)
        null = df[c].isna().to_numpy()
        if t is not None and t.name in _JVM_FLOATS:
            text = jvm_float_text(df[c].to_numpy(dtype="float64", na_value=0.0), t)
            cols[c] = ["" if z else v for v, z in zip(text, null)]
            continue
        f = formatter(t) if t is not None else str
        cols[c] = ["" if z else f(v) for v, z in zip(df[c].tolist(), null)]
    return cols


# A DOUBLE or FLOAT as the JVM prints it (Double/Float.toString), as Flink prints it: Java 17
# gives some values more digits than the shortest decimal (2.82879384806159008E17).
_JVM_FLOATS = {"DOUBLE": (">f8", "double", "asDoubleBuffer"),
               "FLOAT": (">f4", "float", "asFloatBuffer")}


def jvm_float_text(values: np.ndarray, t: FlinkType) -> list[str]:
    """``values`` rendered by the driver's JVM in four calls, whatever their number (the bytes
    go over as one byte[]; ``Arrays.toString`` renders each element)."""
    from pyspark import SparkContext

    context = SparkContext._active_spark_context
    if context is None:
        raise RuntimeError("rendering a DOUBLE/FLOAT needs the Spark session's JVM")  # a bug
    if not len(values):
        return []
    dtype, java_type, view = _JVM_FLOATS[t.name]
    jvm, gateway = context._jvm, context._gateway
    array = gateway.new_array(getattr(gateway.jvm, java_type), len(values))
    getattr(jvm.java.nio.ByteBuffer.wrap(bytearray(values.astype(dtype).tobytes())), view)() \
        .get(array)
    return jvm.java.util.Arrays.toString(array)[1:-1].split(", ")


def write_csv(path: Path, df: pd.DataFrame, types: dict[str, FlinkType],
              header: list[str] | None = None) -> None:
    """Write atomically (temp file + rename): a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header or list(df.columns))
        w.writerows(format_frame(df, types))
    os.replace(tmp, path)


# The CSV text of up to _TEXT_ROWS rows is one Parquet value; Parquet's writer buffers a row
# group in the JVM's heap and checks its size every ``row.check.min`` values: both kept small,
# so that a writer holds a few MB, not 128 MB (with a 256 MB driver heap that was an OOM).
_TEXT_ROWS = 1000
_TEXT_PARTS = {"compression": "none", "parquet.block.size": str(8 << 20),
               "parquet.page.size.row.check.min": "4", "parquet.page.size.row.check.max": "16"}


def write_csv_frame(df: DataFrame, path: Path, types: dict[str, FlinkType], columns: list[str],
                    header: list[str] | None = None, order: list[Column | str] | None = None,
                    keep: Column | None = None, metrics: list[Column] | None = None,
                    also: tuple[tuple[Path, list[str]], ...] = ()) -> dict[str, int | None]:
    """``write_csv`` of a DataFrame, formatted by the executors: each partition's rows become
    CSV text, a value per ``_TEXT_ROWS`` rows (written by Spark as Parquet parts), joined behind
    the header into ``path`` in ``order`` (Spark's sort leaves its ranges in partition order), a
    byte copy on the driver. Atomic as ``write_csv``. ``also``: more files (path, columns)
    written from the same rows in the same order by the same job. Returns the rows written
    (``rows``) and ``metrics`` (named aggregates over ``df``), observed by that job; ``keep``:
    the rows to write."""
    files = [(path, columns, header or columns), *[(p, c, c) for p, c in also]]
    needed = list(dict.fromkeys(c for _, cols, _ in files for c in cols))
    # A DOUBLE or FLOAT as the JVM prints it (format_frame), here by Spark's cast.
    jvm = {c for c in needed if c in types and types[c].name in _JVM_FLOATS}
    seen, written = Observation(), Observation()
    # Observed above the sort: its sampling job (range partitioning) would count rows twice.
    rows = df.orderBy(*order) if order else df
    if metrics:
        rows = rows.observe(seen, *metrics)
    rows = (rows if keep is None else rows.where(keep)).observe(
        written, F.count(F.lit(1)).alias("rows")).select(
        *[F.col(c).cast("string").alias(c) if c in jvm else F.col(c) for c in needed])
    types = {c: FlinkType("STRING") if c in jvm else t for c, t in types.items()}
    names = [f"f{i}" for i in range(len(files))]

    def texts(batches):
        for batch in batches:
            for start in range(0, batch.num_rows, _TEXT_ROWS):
                shown = format_columns(result_frame(pa.Table.from_batches(
                    [batch.slice(start, _TEXT_ROWS)])), types)
                out = []
                for _, cols, _ in files:
                    text = io.StringIO()
                    csv.writer(text, lineterminator="\n").writerows(
                        zip(*[shown[c] for c in cols]))
                    out.append(pa.array([text.getvalue()]))
                yield pa.RecordBatch.from_arrays(out, names)

    parts = path.parent / f".{path.name}.parts"
    shutil.rmtree(parts, ignore_errors=True)
    rows.mapInArrow(texts, ", ".join(f"{n} string" for n in names)).write \
        .options(**_TEXT_PARTS).parquet(str(parts))
    for name, (target, _, head) in zip(names, files):
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
        with os.fdopen(fd, "wb") as out:
            out.write(_header_line(head))
            for part in sorted(parts.glob("part-*")):
                # A row group (8 MB) at a time, its text copied from Arrow's buffer (no Python
                # string), the memory handed back after each: the driver does not grow
                # with the output (read as Python strings, it grew by 300 MB for a 534 MB
                # batch.csv).
                with pq.ParquetFile(part) as texts_of_part:
                    for group in range(texts_of_part.num_row_groups):
                        for text in texts_of_part.read_row_group(
                                group, columns=[name]).column(0).chunks:
                            out.write(_utf8_bytes(text))
                        pa.default_memory_pool().release_unused()
        os.replace(tmp, target)
    shutil.rmtree(parts, ignore_errors=True)
    return {**(seen.get if metrics else {}), **written.get}


def _utf8_bytes(texts: pa.StringArray) -> memoryview:
    """The values of a string array without NULLs, concatenated: its data buffer's slice."""
    offsets = np.frombuffer(texts.buffers()[1], np.int32)[texts.offset:]
    return memoryview(texts.buffers()[2])[offsets[0]:offsets[len(texts)]]


def _header_line(names: list[str]) -> bytes:
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerow(names)
    return text.getvalue().encode()


def write_json(path: Path, data: dict) -> None:
    """Write atomically (temp file + rename), as ``write_csv``."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=2, default=str))
    os.replace(tmp, path)
