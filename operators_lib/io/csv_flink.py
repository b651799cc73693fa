"""Flink's ``csv`` format (a WITH-bound table): no header row, columns by position.

The rules, as Flink 2.3 reads a file (checked with the oracle: tests/cases/sources/):

- an empty field is an empty STRING, and no value of any other type: a parse error (a field
  equal to ``csv.null-literal`` is NULL, whatever its type);
- numbers are read after trimming spaces (Java's ``Integer.parseInt(text.trim())``,
  ``Double.parseDouble``) but a DECIMAL (``new BigDecimal(text)``), a STRING as it stands; a
  BOOLEAN is TRUE iff its trimmed text is ``true`` in any case (Java's
  ``Boolean.parseBoolean``: never an error); a DECIMAL too large for its type is NULL; a
  TIMESTAMP is ``yyyy-MM-dd HH:mm:ss[.f]`` (no ``T``), a TIMESTAMP_LTZ the same ending in Z;
- a row with fewer or more fields than columns is a parse error;
- ``csv.ignore-parse-errors``: a field that does not parse is NULL and a short row is padded
  with NULLs (the row is kept); a row with more fields is dropped;
- ``csv.allow-comments``: a line starting with ``#`` is skipped; ``csv.field-delimiter``,
  ``csv.quote-character`` (Java escapes: ``'\\t'``), ``csv.disable-quote-character``.

A row Flink fails the job on is a rejected row here (rejected.csv: file, line, reason), and so
is a row whose event time is NULL; a row Flink drops under ``csv.ignore-parse-errors`` too.
"""

from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd
import pyarrow as pa

from operators_lib.catalog import TableDef
from operators_lib.io.csv_parse import (
    Rejected,
    convert_text,
    csv_row,
    invalid_utf8,
    physical_schema,
)
from operators_lib.io.formats import Format
from operators_lib.sql.connectors import unescape
from operators_lib.types import FlinkType

_TIMESTAMP = r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d{1,9})?"


def records(table: TableDef, fmt: Format, data: bytes, first_line: int
            ) -> tuple[pa.Table, list[Rejected]]:
    """The typed rows of a piece that starts at line ``first_line``, and its rejected rows."""
    ignore = fmt.flag("csv.ignore-parse-errors")
    null_literal = fmt.option("csv.null-literal")
    quote = None if fmt.flag("csv.disable-quote-character") else unescape(
        fmt.option("csv.quote-character", '"'))
    reader = csv.reader(io.StringIO(data.decode("utf-8", "surrogateescape"), newline=""),
                        delimiter=unescape(fmt.option("csv.field-delimiter", ",")),
                        quotechar=quote or '"',
                        quoting=csv.QUOTE_NONE if quote is None else csv.QUOTE_MINIMAL)
    physical = table.physical
    width = len(physical)
    rows, lines, rejected = [], [], []
    line = reader.line_num
    for rec in reader:
        start, line = first_line + line, reader.line_num
        if not rec or (fmt.flag("csv.allow-comments") and rec[0].startswith("#")):
            continue
        if len(rec) > width or (len(rec) < width and not ignore):
            dropped = " (dropped, as Flink drops it under csv.ignore-parse-errors)" \
                if ignore else ""
            rejected.append(Rejected(start, f"expected {width} fields, got {len(rec)}{dropped}",
                                     csv_row(rec)))
            continue
        rows.append(rec + [None] * (width - len(rec)))
        lines.append(start)
    raw = pd.DataFrame(rows, columns=[c.name for c in physical], dtype=object) if rows else \
        pd.DataFrame({c.name: pd.Series([], dtype=object) for c in physical})
    bad = np.zeros(len(raw), dtype=bool)
    reasons = [""] * len(raw)
    out = {}
    rowtime = table.watermark.column if table.watermark else None
    for c in physical:
        text = raw[c.name]
        null = text.isna().to_numpy() | (text == null_literal).to_numpy(dtype=bool) \
            if null_literal is not None else text.isna().to_numpy()
        values, invalid = _value(text.where(~null, ""), c.type)
        utf8 = text.fillna("").str.contains("[\udc80-\udcff]").to_numpy(dtype=bool)
        invalid = (invalid | utf8) & ~null
        for i in np.flatnonzero(invalid & ~bad):
            reasons[i] = (f"invalid UTF-8 in column {c.name}: {invalid_utf8(text.iat[i])}"
                          if utf8[i] else
                          f"column {c.name}: {text.iat[i]!r} is not a valid {c.type.sql()}")
        if ignore:
            null |= invalid
            invalid = utf8 & ~null
        values = pd.Series(values).where(~null, None)
        if c.name == rowtime:  # Flink fails a job on a NULL event time; reject the row instead
            for i in np.flatnonzero(null & ~bad & ~invalid):
                reasons[i] = f"column {c.name}: NULL in the event-time (WATERMARK) column"
            invalid |= null
        out[c.name] = values
        bad |= invalid
    for i in np.flatnonzero(bad):
        rejected.append(Rejected(lines[i], reasons[i], csv_row([v or "" for v in raw.iloc[i]])))
    rejected.sort(key=lambda r: r[0])
    good = pa.Table.from_pandas(pd.DataFrame(out)[~bad], schema=physical_schema(table),
                                preserve_index=False) if physical else pa.table({})
    return good, rejected


def _value(text: pd.Series, t: FlinkType) -> tuple[pd.Series, np.ndarray]:
    """(values, invalid) of non-NULL fields by Flink's csv rules (module docstring)."""
    if t.name == "STRING":
        return text, np.zeros(len(text), dtype=bool)
    if t.name == "BOOLEAN":
        return text.str.strip().str.lower() == "true", np.zeros(len(text), dtype=bool)
    empty = (text.str.strip() == "").to_numpy()
    if t.name == "DECIMAL":  # Java's new BigDecimal(text): no spaces
        well_formed = text.str.fullmatch(r"[+-]?(?:\d+\.?\d*|\.\d+)").to_numpy(dtype=bool)
        values, invalid = convert_text(text, t)
        too_large = invalid & well_formed  # NULL, as Flink makes it
        return values, (invalid & ~too_large) | ~well_formed
    if t.is_timestamp:  # a TIMESTAMP_LTZ ends in Z (UTC)
        zone = "Z" if t.name == "TIMESTAMP_LTZ" else ""
        plain = text.str.fullmatch(_TIMESTAMP + zone).to_numpy(dtype=bool)
        values, invalid = convert_text(text.str.removesuffix(zone) if zone else text, t)
        return values, invalid | ~plain | empty
    values, invalid = convert_text(text, t)
    return values, invalid | empty

