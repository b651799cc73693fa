"""Split a Flink SQL script into statements and load them into a Catalog plus the final query.

Supported statements: CREATE TABLE, CREATE [TEMPORARY] VIEW, CREATE [TEMPORARY [SYSTEM]]
FUNCTION .. LANGUAGE PYTHON (sql/python_udfs.py), SET 'key' = 'value', and exactly one query,
which must be the last statement: a SELECT, or ``INSERT INTO t [(cols)] SELECT ..`` into a
declared table (sql/insert.py). Everything else is rejected with its line.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from sqlglot import exp
from sqlglot.errors import ParseError

from operators_lib.catalog import Catalog, FunctionDef, TableDef, ViewDef
from operators_lib.errors import InputError, SqlError
from operators_lib.sql.check import check, rewrite_filters
from operators_lib.sql.ddl import parse_create_table
from operators_lib.sql.dialect import (
    line_of,
    parse,
    pre_scan,
    rewrite_lateral_tables,
    rewrite_window_tvfs,
)
from operators_lib.sql.functions import AGGREGATES, FUNCTIONS, RANKING, Unsupported
from operators_lib.sql.statement import Statement

STATE_TTL = "table.exec.state.ttl"
PYTHON_FILES = "python.files"
# twinflow's own: what an exception in a Python UDF does (udf/rejects.py); Flink fails the job.
UDF_ERRORS = "twinflow.python-udf.errors"
UDF_ERROR_MODES = ("fail", "reject")
_DURATION = re.compile(r"^\s*(\d+)\s*([a-z]*)\s*$", re.IGNORECASE)
_DURATION_UNITS = {
    "": 1, "ms": 1, "milli": 1, "millis": 1, "millisecond": 1, "milliseconds": 1,
    "s": 1000, "sec": 1000, "secs": 1000, "second": 1000, "seconds": 1000,
    "min": 60_000, "m": 60_000, "minute": 60_000, "minutes": 60_000,
    "h": 3_600_000, "hour": 3_600_000, "hours": 3_600_000,
    "d": 86_400_000, "day": 86_400_000, "days": 86_400_000,
}


def parse_duration_ms(text: str) -> int | None:
    """A Flink duration option (``'1 h'``, ``'30 min'``, ``'10s'``, ``'500'`` = ms)."""
    m = _DURATION.match(text)
    if not m or m.group(2).lower() not in _DURATION_UNITS:
        return None
    return int(m.group(1)) * _DURATION_UNITS[m.group(2).lower()]


@dataclass(frozen=True)
class Script:
    catalog: Catalog
    query: exp.Expression
    query_stmt: Statement
    # INSERT INTO: the target (not in ``catalog``: the query cannot read it) and the columns
    # named after it (None: all, in order)
    sink: TableDef | None = None
    sink_columns: tuple[str, ...] | None = None


def split_statements(text: str, source: str) -> list[Statement]:
    """Split on ``;`` outside quotes; comments become blanks so line numbers stay right."""
    out: list[Statement] = []
    buf: list[str] = []
    i, n = 0, len(text)
    start = 0
    while i < n:
        c = text[i]
        if text.startswith("--", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            buf.append(" " * (j - i))
            i = j
            continue
        if text.startswith("/*+", i):
            raise SqlError("hints (/*+ .. */) are not supported", text.count("\n", 0, i) + 1,
                           source)
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            buf.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c in "'`\"":
            j = i + 1
            while j < n and not (text[j] == c and not text.startswith(c * 2, j)):
                j += 2 if text.startswith(c * 2, j) else 1
            buf.append(text[i:j + 1])
            i = j + 1
            continue
        if c == ";":
            _emit(out, "".join(buf), text, start, source)
            buf, start = [], i + 1
            i += 1
            continue
        buf.append(c)
        i += 1
    _emit(out, "".join(buf), text, start, source)
    return out


def _emit(out: list[Statement], body: str, text: str, start: int, source: str) -> None:
    stripped = body.lstrip()
    if not stripped.strip():
        return
    offset = start + (len(body) - len(stripped))
    # Drop the leading blank lines so sqlglot's line 1 is the statement's first line.
    out.append(Statement(stripped.rstrip(), text.count("\n", 0, offset) + 1, source))


_CREATE_TABLE = re.compile(r"^CREATE\s+(TEMPORARY\s+)?TABLE\b", re.IGNORECASE)
_CREATE_VIEW = re.compile(
    r"^CREATE\s+(?:TEMPORARY\s+)?VIEW\s+(?:IF\s+NOT\s+EXISTS\s+)?([`\w.]+)\s+AS\s+", re.IGNORECASE)
_CREATE_FUNCTION = re.compile(
    r"^CREATE\s+(?:TEMPORARY\s+(?:SYSTEM\s+)?)?FUNCTION\s+(?:IF\s+NOT\s+EXISTS\s+)?([`\w.]+)\s+"
    r"AS\s+'([^']*)'(?:\s+LANGUAGE\s+(\w+))?\s*(USING\b.*)?$", re.IGNORECASE | re.DOTALL)
_SET = re.compile(r"^SET\s+'([^']+)'\s*=\s*'([^']*)'\s*$", re.IGNORECASE)
_QUERY = re.compile(r"^(SELECT|WITH)\b", re.IGNORECASE)
_INSERT = re.compile(r"^INSERT\s+INTO\s+([`\w.]+)\s*(?:\(([^)]*)\))?\s*(?=SELECT\b|WITH\b|\()",
                     re.IGNORECASE)


def parse_select(stmt: Statement, text: str | None = None, line_offset: int = 0,
                 functions: Collection[str] = ()) -> exp.Expression:
    """Parse a query and check that twinflow handles every node of it (sql/check.py);
    ``functions``: the user-defined functions declared before it."""
    body = rewrite_lateral_tables(stmt.text if text is None else text, functions)
    found = pre_scan(body)
    if found:
        raise stmt.error(found[0], found[1] + line_offset)
    try:
        node = parse(rewrite_window_tvfs(body))
    except ParseError as e:
        err = e.errors[0] if e.errors else {}
        line = err.get("line")
        raise stmt.error(f"cannot parse query: {err.get('description') or e}",
                         (line + line_offset) if line else None) from None
    if not isinstance(node, (exp.Select, exp.Union, exp.Intersect, exp.Except)):
        raise stmt.error(f"expected a SELECT query, got {node.key.upper()}")
    if line_offset:
        for n in node.walk():
            if n.meta and n.meta.get("line"):
                n.meta["line"] = n.meta["line"] + line_offset
    try:
        check(node, functions)
    except Unsupported as e:
        raise stmt.error(str(e), line_of(e.node)) from None
    return rewrite_filters(node)


def load_script(paths: list[str | Path]) -> Script:
    """Read ``--sql`` files in order and build the catalog; the last statement is the query."""
    for p in paths:
        if not Path(p).is_file():
            raise InputError(f"SQL file not found: {p}")
    return script_of([(Path(p).name, Path(p).read_text()) for p in paths],
                     {Path(p).name: Path(p).resolve().parent for p in paths})


def script_of(sources: list[tuple[str, str]], dirs: dict[str, Path] | None = None) -> Script:
    """``load_script`` over (file name, text) pairs: a state directory's recorded query;
    ``dirs``: each file's directory, from which a relative ``python.files`` path is read."""
    statements: list[Statement] = []
    for name, text in sources:
        statements.extend(split_statements(text, name))
    if not statements:
        raise InputError("no SQL statements given")
    catalog = Catalog()
    query: exp.Expression | None = None
    query_stmt: Statement | None = None
    sink: TableDef | None = None
    sink_columns: tuple[str, ...] | None = None
    partitioned: dict[str, Statement] = {}
    for stmt in statements:
        if query is not None:
            raise stmt.error("statements after the final query are not supported "
                             "(exactly one SELECT, last)")
        head = stmt.text
        if _CREATE_TABLE.match(head):
            table = parse_create_table(stmt, (dirs or {}).get(stmt.source))
            if table.name.lower() in catalog.tables or table.name.lower() in catalog.views:
                raise stmt.error(f"table {table.name} is declared twice")
            catalog.tables[table.name.lower()] = table
            if table.partitioned_by:
                partitioned[table.name.lower()] = stmt
        elif m := _CREATE_VIEW.match(head):
            name = m.group(1).replace("`", "").split(".")[-1]
            prefix = head[: m.end()]
            node = parse_select(stmt, head[m.end():], line_offset=prefix.count("\n"),
                                functions=catalog.functions)
            catalog.views[name.lower()] = ViewDef(name, node, stmt.line)
        elif m := _CREATE_FUNCTION.match(head):
            _create_function(catalog, stmt, m)
        elif m := _SET.match(head):
            catalog.settings[m.group(1)] = m.group(2)
            if m.group(1) == STATE_TTL:
                ms = parse_duration_ms(m.group(2))
                if ms is None:
                    raise stmt.error(f"{STATE_TTL}: cannot read the duration {m.group(2)!r} "
                                     "(examples: '1 h', '30 min', '10 s', '500 ms')")
                catalog.state_ttl_ms = ms or None  # 0 disables TTL, as in Flink
            if m.group(1) == UDF_ERRORS and m.group(2) not in UDF_ERROR_MODES:
                raise stmt.error(f"{UDF_ERRORS}: {m.group(2)!r} is none of "
                                 f"{', '.join(map(repr, UDF_ERROR_MODES))}")
            if m.group(1) == PYTHON_FILES:
                base = (dirs or {}).get(stmt.source, Path.cwd())
                catalog.python_files = tuple((base / p.strip()).resolve()
                                             for p in m.group(2).split(",") if p.strip())
        elif _QUERY.match(head):
            query, query_stmt = parse_select(stmt, functions=catalog.functions), stmt
        elif m := _INSERT.match(head):
            name = m.group(1).replace("`", "").split(".")[-1]
            sink = catalog.tables.pop(name.lower(), None)
            if sink is None:
                raise stmt.error(f"INSERT INTO {name}: no such table (declare it with CREATE "
                                 "TABLE first)")
            if m.group(2) is not None:
                sink_columns = tuple(c.strip().strip("`") for c in m.group(2).split(","))
            query = parse_select(stmt, head[m.end():], line_offset=head[:m.end()].count("\n"),
                                 functions=catalog.functions)
            query_stmt = stmt
        else:
            word = " ".join(head.split()[:2]).upper()
            raise stmt.error(f"unsupported statement {word!r} (supported: CREATE TABLE, "
                             "CREATE VIEW, CREATE FUNCTION, SET, and one final SELECT or "
                             "INSERT INTO)")
    if query is None or query_stmt is None:
        raise InputError("the SQL script has no SELECT query (it must be the last statement)")
    if catalog.functions and not catalog.python_files:  # a module beside the SQL files
        catalog.python_files = tuple(dict.fromkeys((dirs or {}).values()))
    for name, stmt in partitioned.items():
        table = catalog.tables.get(name)
        if table is not None and dict(table.options).get("connector") != "filesystem":
            raise stmt.error(f"PARTITIONED BY on {table.name}, a table read as input: its "
                             "partition values come from the key=value folders under the "
                             "'path' of a WITH ('connector' = 'filesystem', ..) clause, which "
                             "it has not")
    return Script(catalog, query, query_stmt, sink, sink_columns)


def _create_function(catalog: Catalog, stmt: Statement, m: re.Match) -> None:
    name = m.group(1).replace("`", "").split(".")[-1]
    language = (m.group(3) or "JAVA").upper()
    if language != "PYTHON":
        raise stmt.error(f"CREATE FUNCTION {name}: {language} functions are not supported "
                         "(twinflow runs Python functions: LANGUAGE PYTHON)")
    if m.group(4):
        raise stmt.error(f"CREATE FUNCTION {name}: USING JAR is not supported")
    if name.lower() in catalog.functions:
        raise stmt.error(f"function {name} is declared twice")
    if name.upper() in FUNCTIONS or name.upper() in AGGREGATES + RANKING:
        raise stmt.error(f"CREATE FUNCTION {name}: a built-in function has this name (Flink "
                         "calls the built-in); name it otherwise")
    catalog.functions[name.lower()] = FunctionDef(name, m.group(2), stmt.line, stmt.source)
