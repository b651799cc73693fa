"""CSV output in Flink's rendering: header row, NULL as an empty field, timestamps
``YYYY-MM-DD HH:MM:SS.fff``, doubles as Java prints them (``20.0``), decimals at their scale."""

from __future__ import annotations

import csv
import datetime as dt
import json
import os
import tempfile
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from operators_lib.types import FlinkType, java_double

_NULLABLE_FLOATS = {pa.float64(): pd.Float64Dtype(), pa.float32(): pd.Float32Dtype()}


def result_frame(table: pa.Table) -> pd.DataFrame:
    """Query results as pandas with NULL kept apart from NaN: floating-point columns in pandas'
    nullable dtypes (NULL is NA, NaN a value); elsewhere ``isna()`` marks NULL, as usual. An
    integer column with NULLs holds Python ints (as float64 a BIGINT past 2^53 would change)."""
    return table.to_pandas(types_mapper=_NULLABLE_FLOATS.get, integer_object_nulls=True)


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
    if t.name == "TIMESTAMP":
        return _timestamp
    if t.name == "DATE":
        return lambda v: v.isoformat() if isinstance(v, dt.date) else str(v)[:10]
    return str


def _timestamp(v) -> str:
    ts = pd.Timestamp(v)
    if ts.tzinfo is not None:
        ts = ts.tz_convert("UTC").tz_localize(None)
    # %Y does not pad years before 1000 to four digits
    return f"{ts.year:04d}-" + ts.strftime("%m-%d %H:%M:%S.") + f"{ts.microsecond // 1000:03d}"


def format_frame(df: pd.DataFrame, types: dict[str, FlinkType]) -> list[list[str]]:
    cols = []
    for c in df.columns:
        f = formatter(types[c]) if c in types else str
        cols.append(["" if null else f(v)
                     for v, null in zip(df[c].tolist(), df[c].isna().tolist())])
    return [list(r) for r in zip(*cols)] if cols else []


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


def write_json(path: Path, data: dict) -> None:
    """Write atomically (temp file + rename), as ``write_csv``."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=2, default=str))
    os.replace(tmp, path)
