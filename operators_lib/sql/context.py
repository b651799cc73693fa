"""What every planning step shares: the catalog, error reporting with lines, Spark-derived types,
hidden column names, and name resolution (``Scope``) from SQL identifiers to plan fields."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from sqlglot import exp

from operators_lib.catalog import Catalog
from operators_lib.errors import SqlError
from operators_lib.plan import Field, Node, Project, quote
from operators_lib.sql.dialect import line_of, to_spark_sql
from operators_lib.sql.script import Statement
from operators_lib.types import FlinkType

HIDDEN_PREFIX = "tw__"


@dataclass
class Ctx:
    catalog: Catalog
    spark: SparkSession
    stmt: Statement
    views_in_progress: tuple[str, ...] = ()
    counter: itertools.count = field(default_factory=itertools.count)

    def err(self, message: str, node: exp.Expression | None = None) -> SqlError:
        return self.stmt.error(message, line_of(node) if node is not None else None)

    def hidden(self, prefix: str) -> str:
        """A fresh hidden column name (unique in the whole query, views included)."""
        return f"{HIDDEN_PREFIX}{prefix}{next(self.counter)}"

    def for_view(self, name: str, stmt: Statement) -> Ctx:
        return Ctx(self.catalog, self.spark, stmt, self.views_in_progress + (name,), self.counter)

    def sql(self, node: exp.Expression, fields) -> str:
        """A resolved expression over ``fields`` as Spark SQL with Flink's arithmetic: ``/``
        of two integers is integer division (truncating toward zero) in the wider type."""
        divs = list(node.find_all(exp.Div))
        if not divs:
            return to_spark_sql(node)
        node = node.copy()
        for d in reversed(list(node.find_all(exp.Div))):  # inner divisions first
            a, b = d.this, d.expression
            ta, tb = self.types(fields, [to_spark_sql(a), to_spark_sql(b)], d)
            if ta.is_integral and tb.is_integral:
                wider = max(ta, tb, key=lambda t: t.integral_bits())
                divisor = exp.Nullif(this=b.copy(), expression=exp.Literal.number(0))
                new = exp.Cast(this=exp.IntDiv(this=a.copy(), expression=divisor),
                               to=exp.DataType.build(wider.spark().simpleString(),
                                                     dialect="spark"))
                if d is node:
                    node = new
                else:
                    d.replace(new)
        return to_spark_sql(node)

    def types(self, fields, exprs: list[str], node: exp.Expression | None) -> list[FlinkType]:
        """Flink types of Spark SQL expressions over ``fields``, as Spark resolves them."""
        schema = T.StructType([T.StructField(f.name, f.type.spark()) for f in fields])
        df = self.spark.createDataFrame([], schema)
        try:
            out = df.select(*[F.expr(e) for e in exprs]).schema
        except AnalysisException as e:
            first = str(e).splitlines()[0]
            raise self.err(f"invalid expression: {first}", node) from None
        types = []
        for f in out.fields:
            try:
                types.append(FlinkType.from_spark(f.dataType))
            except ValueError as e:
                raise self.err(str(e), node) from None
        return types


class PreProjection:
    """Every column of ``child`` plus computed ones (partition keys, sort keys, aggregate
    arguments) as hidden columns, so that a stateful operator reads only plain columns."""

    def __init__(self, ctx: Ctx, child: Node):
        self.ctx, self.child = ctx, child
        self.exprs = [(f.name, quote(f.name)) for f in child.fields]
        self.fields = list(child.fields)

    def add(self, node: exp.Expression, prefix: str) -> Field:
        """A new hidden column computing ``node``."""
        name, text = self.ctx.hidden(prefix), self.ctx.sql(node, self.child.fields)
        field = Field(name, self.ctx.types(self.child.fields, [text], node)[0])
        self.exprs.append((name, text))
        self.fields.append(field)
        return field

    def column(self, node: exp.Expression, prefix: str) -> str:
        """``node``'s column: the child's own when it is a plain column reference."""
        if isinstance(node, exp.Column) and any(f.name == node.name for f in self.child.fields):
            return node.name
        return self.add(node, prefix).name

    def node(self) -> Project:
        return Project(self.child, tuple(self.exprs), tuple(self.fields))


def is_hidden(name: str) -> bool:
    return name.startswith(HIDDEN_PREFIX)


@dataclass(frozen=True)
class Col:
    qualifier: str | None  # lower-case table alias, or None
    name: str  # the name SQL refers to
    field: str  # the plan field it resolves to


@dataclass(frozen=True)
class Scope:
    cols: tuple[Col, ...]

    @staticmethod
    def of(fields, qualifier: str | None) -> Scope:
        q = qualifier.lower() if qualifier else None
        return Scope(tuple(Col(q, f.name, f.name) for f in fields if not is_hidden(f.name)))

    def __add__(self, other: Scope) -> Scope:
        return Scope(self.cols + other.cols)

    def renamed(self, mapping: dict[str, str]) -> Scope:
        return Scope(tuple(Col(c.qualifier, c.name, mapping.get(c.field, c.field))
                           for c in self.cols))

    def qualifiers(self) -> set[str]:
        return {c.qualifier for c in self.cols if c.qualifier}

    def star(self, ctx: Ctx, qualifier: str | None, node: exp.Expression) -> list[Col]:
        if qualifier is None:
            return list(self.cols)
        cols = [c for c in self.cols if c.qualifier == qualifier.lower()]
        if not cols:
            raise ctx.err(f"unknown table {qualifier} in {qualifier}.*", node)
        return cols

    def lookup(self, ctx: Ctx, col: exp.Column) -> str:
        name, q = col.name.lower(), (col.table or "").lower() or None
        hits = [c for c in self.cols if c.name.lower() == name and (q is None or c.qualifier == q)]
        fields = list(dict.fromkeys(c.field for c in hits))
        if len(fields) == 1:
            return fields[0]
        shown = col.sql()
        if not fields:
            if q is not None and q not in self.qualifiers():
                raise ctx.err(f"unknown table {col.table} in column {shown} (tables: "
                              f"{', '.join(sorted(self.qualifiers())) or 'none'})", col)
            avail = ", ".join(f"{c.qualifier}.{c.name}" if c.qualifier else c.name
                              for c in self.cols)
            raise ctx.err(f"unknown column {shown} (available: {avail})", col)
        raise ctx.err(f"column {shown} is ambiguous (it is in "
                      f"{', '.join(sorted({c.qualifier or '?' for c in hits}))}); qualify it",
                      col)

    def resolve(self, ctx: Ctx, node: exp.Expression) -> exp.Expression:
        """A copy of ``node`` whose column references name plan fields (unqualified)."""
        node = node.copy()
        for col in list(node.find_all(exp.Column)):
            if isinstance(col.this, exp.Star):
                raise ctx.err(f"{col.sql()} is only allowed in the SELECT list", col)
            field_name = self.lookup(ctx, col)
            new = exp.column(field_name, quoted=True)
            new.meta.update(col.meta or {})
            if col is node:
                return new
            col.replace(new)
        return node


def sql(node: exp.Expression) -> str:
    """A resolved expression as Spark SQL."""
    return to_spark_sql(node)


def field_map(fields) -> dict[str, Field]:
    return {f.name: f for f in fields}


def referenced(node: exp.Expression) -> set[str]:
    """Plan fields referenced by a resolved expression."""
    return {c.name for c in node.find_all(exp.Column)}
