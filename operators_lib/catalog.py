"""What the SQL script declares: tables (with time attributes and keys), views and settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sqlglot import exp

from operators_lib.types import FlinkType


@dataclass(frozen=True)
class Column:
    name: str
    type: FlinkType
    # A computed column (``x AS expr``): the expression in the Flink dialect; None if physical.
    expr: exp.Expression | None = None
    # ``x AS PROCTIME()``: a processing-time attribute.
    proctime: bool = False
    # Flink's TYPEOF of the column where twinflow knows it exactly (a nullable physical column
    # whose declared type twinflow keeps, e.g. not VARCHAR(n)), else None.
    typeof: str | None = None
    # A computed column's expression as Spark SQL (set by the planner, which types it).
    spark_sql: str | None = None


@dataclass(frozen=True)
class Watermark:
    """``WATERMARK FOR column AS column - INTERVAL ...``: watermark = max(column) - delay_ms."""

    column: str
    delay_ms: int


@dataclass(frozen=True)
class TableDef:
    name: str
    columns: tuple[Column, ...]
    watermark: Watermark | None = None
    primary_key: tuple[str, ...] = ()
    line: int | None = None
    # The one row of a SELECT without FROM (``SELECT CAST(NULL AS INT)``): no input file, no
    # columns, staged by the run itself (ONE_ROW).
    constant: bool = False
    # PARTITIONED BY: the layout of a filesystem table; a source's partition columns come
    # from its files' key=value folders (io/formats.partition_of)
    partitioned_by: tuple[str, ...] = ()
    # The WITH clause's options as written (sql/connectors.py reads them where the table is
    # read), the declaring file's name and folder (a relative 'path' is read from there).
    options: tuple[tuple[str, str], ...] = ()
    source: str | None = None
    base: Path | None = None

    @property
    def physical(self) -> tuple[Column, ...]:
        return tuple(c for c in self.columns if c.expr is None and not c.proctime)

    def column(self, name: str) -> Column | None:
        for c in self.columns:
            if c.name.lower() == name.lower():
                return c
        return None


ONE_ROW = TableDef("tw__one_row", (), constant=True)


@dataclass(frozen=True)
class ViewDef:
    name: str
    query: exp.Expression
    line: int | None = None


@dataclass(frozen=True)
class FunctionDef:
    """``CREATE [TEMPORARY [SYSTEM]] FUNCTION name AS 'identifier' LANGUAGE PYTHON``."""

    name: str
    identifier: str  # 'module.function'
    line: int
    source: str


@dataclass
class Catalog:
    """Tables, views, functions and SET options by lower-case name (identifiers are
    case-insensitive)."""

    tables: dict[str, TableDef] = field(default_factory=dict)
    views: dict[str, ViewDef] = field(default_factory=dict)
    settings: dict[str, str] = field(default_factory=dict)
    state_ttl_ms: int | None = None  # SET 'table.exec.state.ttl' (None: state kept forever)
    functions: dict[str, FunctionDef] = field(default_factory=dict)
    python_files: tuple[Path, ...] = ()  # SET 'python.files', each path resolved
