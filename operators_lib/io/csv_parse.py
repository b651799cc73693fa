"""Parsing a table's CSV text: the header checks, record splitting, typed values, rejected rows.

No Spark here: the driver calls ``read_header`` once per file (a file whose header does not
match its table fails the run before anything runs); the executors call
``parse_records`` on the files' pieces (ingest.py). A malformed row (wrong field count, invalid
UTF-8, a value that does not parse as its column type, a NULL event time) is not dropped
silently: it comes back with its line and the reason.

A piece is read by Arrow's CSV reader and converted by Arrow's kernels when it is plain (no
quotes, carriage returns or empty lines; every value in a plain form: ``_fast_records``), else
by the general path below, which alone reports rejected rows.

Values are read as Flink's CSV format reads them: an empty field is NULL, FLOAT / DOUBLE as
Java's ``Double.parseDouble``, timestamps ``YYYY-MM-DD HH:MM:SS[.f]`` of years 0001-9999, TIME
and TIMESTAMP cut to their type's fraction digits.
"""

from __future__ import annotations

import csv
import io
import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path
from typing import BinaryIO, NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from operators_lib.catalog import TableDef
from operators_lib.errors import InputError
from operators_lib.types import FlinkType

_INT_RE = r"[+-]?\d+"
_DEC_RE = r"[+-]?(?:\d+\.?\d*|\.\d+)"
# Java's Double.parseDouble after String.trim(), as Flink's CSV format reads FLOAT / DOUBLE:
# NaN, Infinity, exponents, hexadecimal (0x1.8p1) and a type suffix (1.5d, 2f).
FLOAT_RE = (r"[+-]?(?:NaN|Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFdD]?"
             r"|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?\d+[fFdD]?)")
_JAVA_WHITESPACE = "".join(map(chr, range(33)))  # what String.trim() strips
_YEAR = r"(?!0000)\d{4}"  # years 0001-9999
_TS_RE = _YEAR + r"-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?"
_DATE_RE = _YEAR + r"-\d{2}-\d{2}"
_TIME_RE = r"([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(?:\.(\d{1,9}))?"
_INVALID_BYTE = "[\udc80-\udcff]"  # a byte that was not UTF-8, decoded by surrogateescape
_PARSE_CHUNK = 4096
_BOM = b"\xef\xbb\xbf"
# A field is data however long it is (Python's csv module stops at 131,072 characters).
csv.field_size_limit(2**31 - 1)


class Rejected(NamedTuple):
    line: int
    reason: str
    row: str  # the raw row as one CSV line; bytes that were not UTF-8 shown as U+FFFD


def arrow_type(t: FlinkType) -> pa.DataType:
    return {
        "TINYINT": pa.int8(), "SMALLINT": pa.int16(), "INT": pa.int32(), "BIGINT": pa.int64(),
        "FLOAT": pa.float32(), "DOUBLE": pa.float64(), "BOOLEAN": pa.bool_(),
        "STRING": pa.string(), "DATE": pa.date32(), "TIMESTAMP": pa.timestamp("us", tz="UTC"),
        "TIMESTAMP_LTZ": pa.timestamp("us", tz="UTC"), "TIME": pa.time64("us"),
    }.get(t.name) or pa.decimal128(t.precision, t.scale)


def physical_schema(table: TableDef) -> pa.Schema:
    """The Arrow schema of a table's physical columns, as parsed."""
    return pa.schema([pa.field(c.name, arrow_type(c.type)) for c in table.physical])


def read_header(table: TableDef, path: Path | str, data: BinaryIO | None = None
                ) -> tuple[str, ...]:
    """The column names of a CSV file's header (lower case), checked against ``table``: each
    column once, none unknown or missing. ``data``: the file, open (default: opened here)."""
    # utf-8-sig: a byte-order mark before the header (Excel writes one) is not part of it.
    with (data or open(path, "rb")) as raw:
        fh = io.TextIOWrapper(raw, newline="", encoding="utf-8-sig", errors="surrogateescape")
        header = next(csv.reader(fh), None)
        fh.detach()
    if header is None:
        raise InputError(f"{path}: empty file (a header row is required)")
    if any(invalid_utf8(h) for h in header):
        raise InputError(f"{path}: invalid UTF-8 in the header row: {csv_row(header)}")
    names = [h.strip().lower() for h in header]
    twice = sorted(h for h, n in zip(header, names) if names.count(n) > 1)
    if twice:
        raise InputError(f"{path}: column(s) named more than once in the header: "
                         f"{', '.join(twice)}")
    wanted = {c.name.lower() for c in table.physical}
    unknown = [h for h, n in zip(header, names) if n not in wanted]
    missing = [c.name for c in table.physical if c.name.lower() not in names]
    if unknown or missing:
        raise InputError(
            f"{path}: header does not match table {table.name}"
            + (f"; unknown column(s): {', '.join(unknown)}" if unknown else "")
            + (f"; missing column(s): {', '.join(missing)}" if missing else "")
            + f" (expected: {', '.join(c.name for c in table.physical)})")
    return tuple(names)


def parse_records(table: TableDef, names: tuple[str, ...], data: bytes, first_line: int,
                  header: bool) -> tuple[pa.Table, list[Rejected]]:
    """Typed rows of a piece of a CSV file that starts at line ``first_line`` (``header``: it
    starts with the file's header, which is skipped) and its rejected rows in line order."""
    if header and data.startswith(_BOM):
        data = data[len(_BOM):]
    fast = _fast_records(table, names, data, header)
    if fast is not None:
        return fast, []
    return general_records(table, names, data, first_line, header)


def general_records(table: TableDef, names: tuple[str, ...], data: bytes, first_line: int,
                    header: bool) -> tuple[pa.Table, list[Rejected]]:
    """``parse_records`` by Python's csv module, value by value where needed: every piece,
    whatever its form, with a reason for each rejected row."""
    # surrogateescape: an invalid byte rejects its row (below), not the whole file.
    text = data.decode("utf-8", "surrogateescape")
    reader = csv.reader(io.StringIO(text, newline=""))
    if header:
        next(reader, None)
    physical = table.physical
    rows, lines, rejected = [], [], []
    width = len(names)
    line = reader.line_num
    for rec in reader:
        start, line = first_line + line, reader.line_num
        if not rec:
            continue
        if len(rec) != width:
            rejected.append(Rejected(start, f"expected {width} fields, got {len(rec)}",
                                     csv_row(rec)))
            continue
        rows.append(rec)
        lines.append(start)
    raw = pd.DataFrame(rows, columns=list(names), dtype=object) if rows else pd.DataFrame(
        {n: pd.Series([], dtype=object) for n in names})
    out = {}
    bad = np.zeros(len(raw), dtype=bool)
    reasons = [""] * len(raw)
    for c in physical:
        text_col = raw[c.name.lower()]
        for i in np.flatnonzero(text_col.str.contains(_INVALID_BYTE).to_numpy(dtype=bool) & ~bad):
            reasons[i] = f"invalid UTF-8 in column {c.name}: {invalid_utf8(text_col.iat[i])}"
            bad[i] = True
    rowtime = table.watermark.column if table.watermark else None
    for c in physical:
        text_col = raw[c.name.lower()]
        values, invalid = convert_text(text_col, c.type)
        out[c.name] = values
        for i in np.flatnonzero(invalid & ~bad):
            reasons[i] = f"column {c.name}: {text_col.iat[i]!r} is not a valid {c.type.sql()}"
        if c.name == rowtime:  # Flink fails a job on a NULL event time; reject the row instead
            null_time = (text_col.astype(str).str.strip() == "").to_numpy() & ~bad & ~invalid
            for i in np.flatnonzero(null_time):
                reasons[i] = f"column {c.name}: NULL in the event-time (WATERMARK) column"
            invalid |= null_time
        bad |= invalid
    for i in np.flatnonzero(bad):
        rejected.append(Rejected(lines[i], reasons[i], csv_row(list(raw.iloc[i]))))
    rejected.sort(key=lambda r: r[0])
    good = pa.Table.from_pandas(pd.DataFrame(out)[~bad], schema=physical_schema(table),
                                preserve_index=False) if physical else pa.table({})
    return good, rejected


def first_nonfinite(table: TableDef, good: pa.Table) -> dict[str, list[int | None]]:
    """For each FLOAT / DOUBLE column with NaN or ±Infinity, the position of the first of each
    among the typed rows ({column: [NaN or None, ±Infinity or None]})."""
    found = {}
    for c in table.physical:
        if not c.type.is_floating:
            continue
        column = good.column(c.name)
        values = column.to_numpy(zero_copy_only=False).astype(float)  # NULL as NaN
        null = column.is_null().to_numpy(zero_copy_only=False)
        first = [int(w[0]) if len(w) else None
                 for w in (np.flatnonzero(np.isnan(values) & ~null),
                           np.flatnonzero(np.isinf(values)))]
        if first != [None, None]:
            found[c.name] = first
    return found


def rejected_csv(table: str, file: str, rejected: list[Rejected]) -> str:
    """Rejected rows as rejected.csv's lines: table, file, line, reason, row."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(
        (table, file, line, reason, row) for line, reason, row in rejected)
    return buf.getvalue()


def invalid_utf8(text: str) -> str:
    """The bytes that were not UTF-8 (decoded as surrogates by ``surrogateescape``), as
    'byte(s) 0xff, ..'; empty if there are none."""
    found = [f"0x{ord(ch) - 0xDC00:02x}" for ch in text if "\udc80" <= ch <= "\udcff"]
    return f"byte(s) {', '.join(found)}" if found else ""


def csv_row(fields: list[str]) -> str:
    """A row as one CSV line; bytes that were not UTF-8 shown as U+FFFD."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="").writerow(fields)
    return buf.getvalue().encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def convert_text(s: pd.Series, t: FlinkType) -> tuple[pd.Series, np.ndarray]:
    """(typed values with None for NULL, invalid mask). An empty field is NULL."""
    s = s.astype(str)
    null = (s == "").to_numpy()
    text = s.str.strip()
    if t.name == "STRING":
        return s.where(~null, None), np.zeros(len(s), dtype=bool)
    if t.is_integral:
        ok = text.str.fullmatch(_INT_RE).to_numpy(dtype=bool) | null
        lim = 2 ** (t.integral_bits() - 1)
        # Python ints: exact for every BIGINT (a float round trip is not).
        nums = [int(v) if good else None for v, good in zip(text, ok & ~null)]
        for i, v in enumerate(nums):
            if v is not None and not -lim <= v < lim:
                ok[i], nums[i] = False, None
        return pd.array(nums, dtype="Int64"), ~ok
    if t.is_floating:
        return _floats(s, null)
    if t.name == "DECIMAL":
        return _decimals(text, null, t)
    if t.name == "BOOLEAN":
        low = text.str.lower()
        ok = low.isin(["true", "false"]).to_numpy() | null
        return low.map({"true": True, "false": False}).where(~null, None), ~ok
    if t.name == "TIME":
        return _times_of_day(text, null, t)
    return _times(text, null, t)


def _times_of_day(text: pd.Series, null: np.ndarray, t: FlinkType) -> tuple[pd.Series,
                                                                            np.ndarray]:
    """TIME values 'HH:MM:SS[.f]', cut to the type's fraction digits as Flink's CSV format
    reads them (TIME(0) reads '10:11:12.5' as 10:11:12)."""
    parts = text.str.extract("^" + _TIME_RE + "$")
    ok = parts[0].notna().to_numpy() & ~null
    h, m, sec = (pd.to_numeric(parts[i]).fillna(0).to_numpy(np.int64) for i in range(3))
    fraction = pd.to_numeric(parts[3].fillna("").str.ljust(6, "0").str[:6]).to_numpy(np.int64)
    unit = 10 ** (6 - t.precision)
    micros = ((h * 3600 + m * 60 + sec) * 1_000_000 + fraction // unit * unit)
    values = pa.array(micros, pa.time64("us"), mask=~ok).to_pandas()
    return values, ~(ok | null)


def _floats(s: pd.Series, null: np.ndarray) -> tuple[pd.Series, np.ndarray]:
    """Java's ``Double.parseDouble`` (Flink's CSV format): NaN and Infinity are values, kept
    apart from NULL (pandas' nullable Float64)."""
    text = s.str.strip(_JAVA_WHITESPACE)
    ok = text.str.fullmatch(FLOAT_RE).to_numpy(dtype=bool) & ~null
    strings = text.to_numpy(dtype=object)[ok]
    try:
        parsed = strings.astype(float)  # Python's float(): decimals, NaN, [+-]Infinity
    except ValueError:  # hexadecimal or with a type suffix (0x1p3, 1.5d): one by one
        parsed = np.array([java_double(v) for v in strings], dtype=float)
    values = np.zeros(len(s))
    values[ok] = parsed
    return pd.Series(pd.arrays.FloatingArray(values, ~ok)), ~(ok | null)


def java_double(text: str) -> float:
    """``Double.parseDouble`` of a string matching ``FLOAT_RE``."""
    if text.endswith(("NaN", "Infinity")):
        return float(text)
    text = text.rstrip("fFdD")
    return float.fromhex(text) if "x" in text.lower() else float(text)


def _times(text: pd.Series, null: np.ndarray, t: FlinkType) -> tuple[pd.Series, np.ndarray]:
    """DATE / TIMESTAMP values of years 0001-9999 (pandas' nanoseconds end in 2262): checked by
    Arrow's calendar, chunk by chunk (a chunk with an invalid date value by value)."""
    date = t.name == "DATE"
    ok = text.str.fullmatch(_DATE_RE if date else _TS_RE).to_numpy(dtype=bool) & ~null
    target = pa.date32() if date else pa.timestamp("us")
    # At most microseconds: "YYYY-MM-DD HH:MM:SS." and six digits are 26 characters.
    strings = pc.utf8_slice_codeunits(pa.array(text.where(ok, None), pa.string()), 0, 26)
    chunks = []
    for start in range(0, len(strings), _PARSE_CHUNK):
        chunk = strings.slice(start, _PARSE_CHUNK)
        try:
            chunks.append(chunk.cast(target))
        except pa.ArrowInvalid:
            chunks.append(pa.array([_parse_one(v, target) for v in chunk.to_pylist()], target))
    parsed = pa.chunked_array(chunks, target)
    ok &= ~parsed.is_null().to_numpy(zero_copy_only=False)
    if date:
        return parsed.to_pandas(date_as_object=True), ~(ok | null)
    utc = parsed.cast(pa.timestamp("us", tz="UTC")).to_pandas(coerce_temporal_nanoseconds=False)
    return utc, ~(ok | null)


def _parse_one(value: str | None, target: pa.DataType):
    try:
        return None if value is None else pa.array([value]).cast(target)[0].as_py()
    except pa.ArrowInvalid:
        return None


def _decimals(text: pd.Series, null: np.ndarray, t: FlinkType) -> tuple[pd.Series, np.ndarray]:
    quantum = Decimal(1).scaleb(-t.scale)
    limit = Decimal(10) ** (t.precision - t.scale)
    values, ok = [], np.ones(len(text), dtype=bool)
    for i, v in enumerate(text):
        if null[i]:
            values.append(None)
            continue
        try:
            d = Decimal(v).quantize(quantum, rounding=ROUND_HALF_UP) if re.fullmatch(
                _DEC_RE, v) else None
        except InvalidOperation:
            d = None
        if d is None or abs(d) >= limit:
            ok[i] = False
            values.append(None)
        else:
            values.append(d)
    return pd.Series(values, dtype=object), ~ok


# -- the fast path: a clean piece read by Arrow's CSV reader and converted by Arrow's kernels --
# A piece without quotes, carriage returns or empty lines splits into fields as Python's csv
# module splits it; a value in one of these plain forms converts to the value the general path
# gives (Arrow parses numbers correctly rounded, as Python and Java do). Anything else (a field
# count that is off, invalid UTF-8, a value in another form, a NULL event time) sends the whole
# piece to the general path, which gives every reason.
_PLAIN = {
    "int": r"^-?[0-9]{1,18}$",
    "float": r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$",
    "TIMESTAMP": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?$",
    "DATE": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
}


def _fast_records(table: TableDef, names: tuple[str, ...], data: bytes, header: bool
                  ) -> pa.Table | None:
    """The typed rows of a clean piece, or None: the piece needs the general path."""
    if b'"' in data or b"\r" in data or b"\n\n" in data or data.startswith(b"\n"):
        return None
    invalid = []

    def off(row) -> str:
        invalid.append(row)
        return "skip"

    try:
        raw = pacsv.read_csv(
            io.BytesIO(data), read_options=pacsv.ReadOptions(
                column_names=list(names), skip_rows=1 if header else 0, use_threads=False,
                block_size=max(len(data) + 1, 1 << 20)),
            parse_options=pacsv.ParseOptions(quote_char=False, invalid_row_handler=off),
            convert_options=pacsv.ConvertOptions(
                column_types={n: pa.string() for n in names}, strings_can_be_null=False))
    except (pa.ArrowInvalid, UnicodeDecodeError):
        return None
    if invalid:
        return None
    rowtime = table.watermark.column if table.watermark else None
    columns = []
    for c in table.physical:
        values = _fast_convert(raw.column(c.name.lower()), c.type, c.name == rowtime)
        if values is None:
            return None
        columns.append(values)
    return pa.Table.from_arrays(columns, schema=physical_schema(table))


def _fast_convert(text: pa.ChunkedArray, t: FlinkType, rowtime: bool) -> pa.ChunkedArray | None:
    null = pc.equal(text, "")
    if rowtime and pc.any(null).as_py():
        return None
    if t.name == "STRING":
        return pc.if_else(null, None, text)
    kind = "int" if t.is_integral else "float" if t.is_floating else t.name if t.name in (
        "DATE", "TIMESTAMP", "TIMESTAMP_LTZ") else None
    if kind is None:
        return None
    pattern = _PLAIN["TIMESTAMP" if kind == "TIMESTAMP_LTZ" else kind]
    plain = pc.or_(null, pc.match_substring_regex(text, pattern))
    if not pc.all(plain).as_py():
        return None
    if kind in ("DATE", "TIMESTAMP", "TIMESTAMP_LTZ") and pc.any(
            pc.starts_with(text, "0000")).as_py():  # years 0001-9999
        return None
    values = pc.if_else(null, None, text)
    try:
        if kind == "int":
            parsed = pc.cast(values, pa.int64())
            lim = 2 ** (t.integral_bits() - 1)  # 18 digits fit a BIGINT
            if t.integral_bits() < 64 and not pc.all(pc.and_(
                    pc.greater_equal(parsed, pa.scalar(-lim, pa.int64())),
                    pc.less(parsed, pa.scalar(lim, pa.int64())))).as_py():
                return None
        elif kind == "float":
            return pc.cast(values, pa.float64()).cast(arrow_type(t), safe=False)
        elif kind == "DATE":
            parsed = pc.cast(values, pa.date32())
        else:  # at most microseconds: "YYYY-MM-DD HH:MM:SS." and six digits
            parsed = pc.cast(pc.utf8_slice_codeunits(values, 0, 26), pa.timestamp("us"))
    except pa.ArrowInvalid:  # a day or time that is out of range
        return None
    return parsed.cast(arrow_type(t))
