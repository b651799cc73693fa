"""``CREATE TABLE`` in Flink's dialect: typed and computed columns, ``x AS PROCTIME()``,
``WATERMARK FOR col AS col [- INTERVAL 'n' UNIT]``, ``PRIMARY KEY (..) NOT ENFORCED``,
``PARTITIONED BY (..)`` (an INSERT target's only, sql/insert.py) and the ``WITH (...)``
options (kept as written: sql/connectors.py reads them where the table is read). sqlglot has
no grammar for these, so the column list is split here and each expression is parsed with
sqlglot."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from sqlglot import exp
from sqlglot.errors import ParseError

from operators_lib.catalog import Column, TableDef, Watermark
from operators_lib.sql.check import check
from operators_lib.sql.connectors import parse_options
from operators_lib.sql.dialect import parse_expression
from operators_lib.sql.functions import Unsupported
from operators_lib.sql.reserved import reserved_message
from operators_lib.sql.statement import Statement
from operators_lib.types import FlinkType

_HEAD = re.compile(r"^CREATE\s+(?:TEMPORARY\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([`\w.]+)\s*\(",
                   re.IGNORECASE)
_NAME = r"(`[^`]+`|\w+)"  # an identifier, backticked ones may hold any character but `
_WATERMARK = re.compile(rf"^WATERMARK\s+FOR\s+{_NAME}\s+AS\s+(.+)$", re.IGNORECASE | re.DOTALL)
_PK = re.compile(r"^(?:CONSTRAINT\s+[`\w]+\s+)?PRIMARY\s+KEY\s*\(([^)]*)\)\s*NOT\s+ENFORCED$",
                 re.IGNORECASE | re.DOTALL)
_COMPUTED = re.compile(rf"^{_NAME}\s+AS\s+(.+?)(?:\s+COMMENT\s+'[^']*')?$",
                       re.IGNORECASE | re.DOTALL)
_PHYSICAL = re.compile(rf"^{_NAME}\s+(.+?)(?:\s+COMMENT\s+'(?:[^']|'')*')?$",
                       re.IGNORECASE | re.DOTALL)
_PARTITIONED = re.compile(r"^PARTITIONED\s+BY\s*\(([^)]*)\)", re.IGNORECASE)
_UNIT_MS = {"MILLISECOND": 1, "SECOND": 1000, "MINUTE": 60_000, "HOUR": 3_600_000,
            "DAY": 86_400_000}


def _ident(text: str) -> str:
    return text.strip().strip("`")


def _structure(text: str, start: int = 0) -> Iterator[tuple[int, str, int]]:
    """(index, char, paren depth after it) for every character outside quotes."""
    depth, quote = 0, ""
    for i in range(start, len(text)):
        c = text[i]
        if quote:
            quote = "" if c == quote else quote
            continue
        if c in "'`\"":
            quote = c
            continue
        depth += (c == "(") - (c == ")")
        yield i, c, depth


def _split_top(body: str, base: int) -> list[tuple[str, int]]:
    """Split on commas outside parentheses and quotes; keep each piece's offset."""
    parts, start = [], 0
    for i, c, depth in _structure(body):
        if c == "," and depth == 0:
            parts.append((body[start:i], base + start))
            start = i + 1
    parts.append((body[start:], base + start))
    return [(p.strip(), off + len(p) - len(p.lstrip())) for p, off in parts if p.strip()]


def _matching_paren(text: str, open_idx: int) -> int:
    return next((i for i, c, depth in _structure(text, open_idx) if c == ")" and depth == 0), -1)


def interval_ms(node: exp.Expression) -> int | None:
    """Milliseconds of ``INTERVAL '2' MINUTE`` / ``INTERVAL '0.001' SECOND``; None otherwise."""
    if not isinstance(node, exp.Interval) or node.args.get("unit") is None:
        return None
    unit = node.args["unit"].name.upper().rstrip("S")
    if unit not in _UNIT_MS:
        return None
    try:
        value = float(node.this.name)
    except ValueError:
        return None
    return round(value * _UNIT_MS[unit])


def parse_create_table(stmt: Statement, base: Path | None = None) -> TableDef:
    """The table ``stmt`` declares; ``base``: the folder of its SQL file."""
    text = stmt.text
    m = _HEAD.match(text)
    if not m:
        raise stmt.error("cannot parse CREATE TABLE")
    name = _ident(m.group(1).split(".")[-1])
    close = _matching_paren(text, m.end() - 1)
    if close < 0:
        raise stmt.error(f"unbalanced parentheses in CREATE TABLE {name}")
    rest = text[close + 1:].strip()
    partitioned = _PARTITIONED.match(rest)
    if partitioned:
        rest = rest[partitioned.end():].strip()
    with_clause = re.match(r"^WITH\s*\((.*)\)$", rest, re.IGNORECASE | re.DOTALL)
    if rest and not with_clause:
        raise stmt.error(f"unsupported clause after the column list of {name}: "
                         f"{rest.split()[0].upper()!r}", text.count("\n", 0, close) + 1)
    options = parse_options(with_clause.group(1)) if with_clause else ()
    if options is None:
        raise stmt.error(f"cannot read the WITH clause of {name} (a list of 'key' = 'value')",
                         text.count("\n", 0, close) + 1)

    def line(off: int) -> int:
        return text.count("\n", 0, off) + 1

    columns: list[Column] = []
    watermark_spec: tuple[str, str, int] | None = None
    pk: tuple[str, ...] = ()
    for item, off in _split_top(text[m.end():close], m.end()):
        if wm := _WATERMARK.match(item):
            watermark_spec = (_ident(wm.group(1)), wm.group(2), off)
        elif pkm := _PK.match(item):
            pk = tuple(_ident(c) for c in pkm.group(1).split(","))
        elif re.match(r"^(PRIMARY|CONSTRAINT|UNIQUE|LIKE)\b", item, re.IGNORECASE):
            raise stmt.error(f"unsupported table constraint {item.split('(')[0].strip()!r} "
                             "(only PRIMARY KEY (..) NOT ENFORCED)", line(off))
        elif (bare := re.match(r"\w+", item)) and (word := reserved_message(bare.group(0))):
            raise stmt.error(f"{word} (a column of {name})", line(off))
        elif cm := _COMPUTED.match(item):
            columns.append(_computed(stmt, _ident(cm.group(1)), cm.group(2), line(off)))
        elif pm := _PHYSICAL.match(item):
            type_text = pm.group(2)
            if re.search(r"\bMETADATA\b", type_text, re.IGNORECASE):
                raise stmt.error(f"METADATA columns are not supported ({pm.group(1)})", line(off))
            try:
                ftype = FlinkType.parse(type_text)
            except ValueError as e:
                raise stmt.error(f"{e} for column {_ident(pm.group(1))}", line(off)) from None
            columns.append(Column(_ident(pm.group(1)), ftype, typeof=_typeof(type_text, ftype)))
        else:
            raise stmt.error(f"cannot parse column definition {item!r}", line(off))
    names = [c.name.lower() for c in columns]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise stmt.error(f"duplicate column(s) {sorted(dup)} in table {name}")
    for k in pk:
        if k.lower() not in names:
            raise stmt.error(f"PRIMARY KEY column {k} is not a column of {name}")
    watermark = None
    if watermark_spec:
        watermark = _watermark(stmt, columns, *watermark_spec, line=line(watermark_spec[2]))
    # Primary-key columns are NOT NULL and the rowtime column a time attribute: TYPEOF shows it.
    marked = {k.lower() for k in pk} | ({watermark.column.lower()} if watermark else set())
    columns = [replace(c, typeof=None) if c.name.lower() in marked else c for c in columns]
    parts = tuple(_ident(c) for c in partitioned.group(1).split(",")) if partitioned else ()
    for k in parts:
        if k.lower() not in names:
            raise stmt.error(f"PARTITIONED BY column {k} is not a column of {name}")
    return TableDef(name, tuple(columns), watermark, pk, stmt.line, partitioned_by=parts,
                    options=options, source=stmt.source, base=base)


def _typeof(type_text: str, ftype: FlinkType) -> str | None:
    """Flink's TYPEOF of a physical column, if twinflow keeps its declared type: not for NOT NULL
    columns, nor for CHAR / VARCHAR (twinflow stores every string as STRING)."""
    if re.search(r"\bNOT\s+NULL\b", type_text, re.IGNORECASE) or re.match(
            r"\s*(VAR)?CHAR\b", type_text, re.IGNORECASE):
        return None
    return ftype.sql()


def _computed(stmt: Statement, name: str, expr_text: str, line: int) -> Column:
    try:
        node = parse_expression(expr_text)
    except ParseError:
        raise stmt.error(f"cannot parse computed column {name} AS {expr_text}", line) from None
    if isinstance(node, exp.Anonymous) and node.name.upper() == "PROCTIME" and not (
            node.expressions):
        return Column(name, FlinkType("TIMESTAMP", 3), None, proctime=True)
    try:
        check(node)
    except Unsupported as e:
        raise stmt.error(f"{e} (computed column {name})", line) from None
    # The type of a computed column is known once Spark resolves it; placeholder until then.
    return Column(name, FlinkType("STRING"), node)


def _watermark(stmt: Statement, columns: list[Column], col: str, expr_text: str, off: int,
               line: int) -> Watermark:
    target = next((c for c in columns if c.name.lower() == col.lower()), None)
    if target is None:
        raise stmt.error(f"WATERMARK FOR {col}: no such column", line)
    if target.expr is not None:
        raise stmt.error(f"WATERMARK FOR {col}: a computed rowtime column is not supported yet "
                         "(declare the event time as a TIMESTAMP(3) or TIMESTAMP_LTZ(3) column "
                         "of the CSV)", line)
    if not target.type.is_timestamp or target.proctime:
        raise stmt.error(f"WATERMARK FOR {col}: the rowtime column must be a TIMESTAMP(3) or "
                         f"TIMESTAMP_LTZ(3) (a {target.type.sql()} rowtime is not supported)",
                         line)
    if target.type.precision != 3:
        raise stmt.error(f"WATERMARK FOR {col}: a {target.type.sql()} rowtime is not supported "
                         "(twinflow's rowtime is a TIMESTAMP(3) or TIMESTAMP_LTZ(3))", line)
    try:
        node = parse_expression(expr_text)
    except ParseError:
        raise stmt.error(f"cannot parse WATERMARK expression {expr_text.strip()}", line) from None
    if isinstance(node, exp.Column) and node.name.lower() == col.lower():
        return Watermark(target.name, 0)
    if (isinstance(node, exp.Sub) and isinstance(node.this, exp.Column)
            and node.this.name.lower() == col.lower()):
        delay = interval_ms(node.expression)
        if delay is not None and delay >= 0:
            return Watermark(target.name, delay)
    raise stmt.error(f"unsupported WATERMARK strategy {expr_text.strip()!r} (supported: "
                     f"{col} or {col} - INTERVAL 'n' UNIT)", line)
