"""What every planning step shares: the catalog, error reporting with lines, Spark-derived types,
hidden column names, and name resolution (``Scope``) from SQL identifiers to plan fields."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace

from py4j.protocol import Py4JJavaError
from pyspark.errors import AnalysisException, IllegalArgumentException
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from sqlglot import exp

from operators_lib.catalog import Catalog
from operators_lib.errors import SqlError
from operators_lib.plan import Field, Filter, Node, Project, Union, held_time, quote
from operators_lib.sql.dialect import line_of
from operators_lib.sql.expressions import to_spark
from operators_lib.sql.functions import Env, Function, Unsupported
from operators_lib.sql.python_udfs import PythonFunction
from operators_lib.sql.statement import Statement
from operators_lib.types import FlinkType
from operators_lib.udf.calls import calls_python

HIDDEN_PREFIX = "tw__"


@dataclass
class Ctx:
    catalog: Catalog
    spark: SparkSession
    stmt: Statement
    views_in_progress: tuple[str, ...] = ()
    counter: itertools.count = field(default_factory=itertools.count)
    type_cache: dict = field(default_factory=dict)  # (fields, expressions) -> their types
    regex_cache: dict = field(default_factory=dict)
    functions: dict[str, Function] = field(default_factory=dict)  # user-defined, upper-case
    table_functions: dict[str, PythonFunction] = field(default_factory=dict)  # ditto
    frames: dict = field(default_factory=dict)  # fields -> the empty DataFrame types resolve on

    def err(self, message: str, node: exp.Expression | None = None) -> SqlError:
        return self.stmt.error(message, line_of(node) if node is not None else None)

    def refuse_held_time(self, node: Node, what: str, where: exp.Expression) -> None:
        """Event-time operators over an interval or temporal join's result (Flink holds the
        watermark back behind it) or a UNION are not supported yet: refuse them."""
        for held in held_time(node):
            kind = "a UNION" if isinstance(held, Union) else (
                "an interval join's result" if held.interval else "a temporal join's result")
            raise self.err(f"{what} over {kind} is not supported yet", where)

    def hidden(self, prefix: str) -> str:
        """A fresh hidden column name (unique in the whole query, views included)."""
        return f"{HIDDEN_PREFIX}{prefix}{next(self.counter)}"

    def for_view(self, name: str, stmt: Statement) -> Ctx:
        return Ctx(self.catalog, self.spark, stmt, self.views_in_progress + (name,), self.counter,
                   self.type_cache, self.regex_cache, self.functions, self.table_functions,
                   self.frames)

    def sql(self, node: exp.Expression, fields, condition: bool = False) -> str:
        """A resolved expression over ``fields`` as Spark SQL with Flink's semantics
        (sql/expressions.py); what twinflow does not reproduce is refused with its line.
        ``condition``: ``node`` is a WHERE or HAVING condition."""
        # A renderer asks the types of subexpressions; each is rendered and typed once per
        # call (rendering it again per ancestor that asks is exponential in the depth). The
        # memo holds the node, so that its id is not reused by a renderer's temporary node.
        typed: dict[int, tuple[exp.Expression, FlinkType]] = {}
        key = tuple(fields)

        def type_of(n: exp.Expression) -> FlinkType:
            if id(n) not in typed:
                text = to_spark(n, sub)
                self._timestamp_precision(n, fields, text)
                typed[id(n)] = n, self.types(fields, [text], n, key)[0]
            return typed[id(n)][1]

        sub = Env(type_of, self.regex_groups, self.functions, False,
                  {f.name: f.origin for f in fields if f.origin}, self.format_error,
                  self.time_zone_id)
        try:
            text = to_spark(node, replace(sub, condition=condition))
        except Unsupported as e:
            raise self.err(str(e), e.node) from None
        self._timestamp_precision(node, fields, text)
        return text

    def where(self, child: Node, cond: exp.Expression) -> Node:
        """``child`` filtered by a resolved WHERE or HAVING condition. Its conjuncts calling a
        Python function go in a Filter above the others', so that the function sees only the
        rows the others keep, as in Flink (a stream's Filter also keeps its marker rows: an
        OR, inside which Spark would call the function on every row)."""
        text = self.sql(cond, child.fields, condition=True)
        if not calls_python(text):
            return Filter(child, text, child.fields)
        conjuncts = list(cond.flatten(unnest=True)) if isinstance(cond, exp.And) else [cond]
        texts = [self.sql(c, child.fields, condition=True) for c in conjuncts]
        python = [t for t in texts if calls_python(t)]
        for group in ([t for t in texts if t not in python], python):
            if group:
                child = Filter(child, " AND ".join(f"({t})" for t in group), child.fields)
        return child

    def _timestamp_precision(self, node: exp.Expression, fields, text: str) -> None:
        """A computed timestamp is a TIMESTAMP(3) in twinflow (also inside an ARRAY, MAP or
        ROW); Flink computes one over a TIMESTAMP(0) or TIMESTAMP(6) column at that column's
        precision: refuse it (unless the column is CAST first)."""
        if isinstance(node, exp.Column):
            return
        odd = {f.name: f.type for f in fields if f.type.is_timestamp and f.type.precision != 3}
        used = [c for c in node.find_all(exp.Column) if c.name in odd
                and not isinstance(c.parent, exp.Cast)]
        if used and _holds_timestamp(self.types(fields, [text], node)[0]):
            t = odd[used[0].name]
            raise self.err(f"a timestamp computed from {used[0].name} ({t.sql()}): twinflow "
                           f"computes timestamps as {t.name}(3); CAST({used[0].name} AS "
                           f"{t.name}(3)) first", used[0])

    def types(self, fields, exprs: list[str], node: exp.Expression | None,
              fields_key: tuple | None = None) -> list[FlinkType]:
        """Flink types of Spark SQL expressions over ``fields``, as Spark resolves them; a column
        itself keeps its declared type (a TIMESTAMP's precision, which Spark does not keep).
        ``fields_key``: ``tuple(fields)``, if the caller has it (its hash is not cached)."""
        key = (fields_key or tuple(fields), tuple(exprs))
        if key not in self.type_cache:
            declared = {quote(f.name): f.type for f in fields}
            computed = [e for e in exprs if e not in declared]
            types = dict(zip(computed, self._types(key[0], computed, node) if computed else []))
            self.type_cache[key] = [declared.get(e) or types[e] for e in exprs]
        return self.type_cache[key]

    def _types(self, fields: tuple, exprs: list[str], node: exp.Expression | None
               ) -> list[FlinkType]:
        df = self.frames.get(fields)
        if df is None:
            schema = T.StructType([T.StructField(f.name, f.type.spark()) for f in fields])
            df = self.frames[fields] = self.spark.createDataFrame([], schema)
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

    def format_error(self, fmt: str, samples: tuple) -> str | None:
        """Java's Formatter exception (Locale.US, Flink's and Spark's) for ``fmt`` over the
        sample arguments (Python values py4j passes as Java's), None if it formats them."""
        sc = self.spark.sparkContext
        array = sc._gateway.new_array(sc._jvm.java.lang.Object, len(samples))
        for i, sample in enumerate(samples):
            array[i] = sample
        try:
            sc._jvm.java.lang.String.format(sc._jvm.java.util.Locale.US, fmt, array)
        except (Py4JJavaError, IllegalArgumentException) as e:  # java.util.IllegalFormatException
            return str(e)
        return None

    def time_zone_id(self, zone: str) -> str:
        """The ID of java.util.TimeZone.getTimeZone(zone) (Flink's zones): GMT if unknown."""
        return self.spark.sparkContext._jvm.java.util.TimeZone.getTimeZone(zone).getID()

    def regex_groups(self, pattern: str) -> int | None:
        """Capturing groups of a java.util.regex pattern (the engine of Flink and Spark), None if
        Java rejects it."""
        if pattern not in self.regex_cache:
            jvm = self.spark.sparkContext._jvm
            try:
                groups = jvm.java.util.regex.Pattern.compile(pattern).matcher("").groupCount()
            except (Py4JJavaError, IllegalArgumentException):  # PatternSyntaxException
                groups = None
            self.regex_cache[pattern] = groups
        return self.regex_cache[pattern]


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


def _holds_timestamp(t: FlinkType) -> bool:
    return t.is_timestamp or any(_holds_timestamp(a) for a in t.args)


def is_hidden(name: str) -> bool:
    return name.startswith(HIDDEN_PREFIX)


@dataclass(frozen=True)
class Col:
    qualifier: str | None  # lower-case table alias, or None
    name: str  # the name SQL refers to
    field: str  # the plan field it resolves to
    typeof: str | None = None  # Flink's TYPEOF, when twinflow knows it (a table's own column)


@dataclass(frozen=True)
class Scope:
    cols: tuple[Col, ...]

    @staticmethod
    def of(fields, qualifier: str | None, typeof: dict[str, str] | None = None) -> Scope:
        q = qualifier.lower() if qualifier else None
        return Scope(tuple(Col(q, f.name, f.name, (typeof or {}).get(f.name))
                           for f in fields if not is_hidden(f.name)))

    def __add__(self, other: Scope) -> Scope:
        return Scope(self.cols + other.cols)

    def renamed(self, mapping: dict[str, str]) -> Scope:
        return Scope(tuple(Col(c.qualifier, c.name, mapping.get(c.field, c.field), c.typeof)
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
        return self.lookup_col(ctx, col).field

    def lookup_col(self, ctx: Ctx, col: exp.Column) -> Col:
        name, q = col.name.lower(), (col.table or "").lower() or None
        hits = [c for c in self.cols if c.name.lower() == name and (q is None or c.qualifier == q)]
        fields = list(dict.fromkeys(c.field for c in hits))
        if len(fields) == 1:
            return hits[0]
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
        """A copy of ``node`` whose column references name plan fields (unqualified), and
        ``TYPEOF(column)`` replaced by Flink's type name."""
        node = self._typeof(ctx, node.copy())
        for col in list(node.find_all(exp.Column)):
            if isinstance(col.this, exp.Star):
                raise ctx.err(f"{col.sql()} is only allowed in the SELECT list", col)
            field_name = self.lookup(ctx, col)
            new = exp.column(field_name, quoted=True)
            new.meta.update(col.meta or {})
            if line_of(col):  # the line is on the identifier, which is not kept
                new.meta["line"] = line_of(col)
            if col is node:
                return new
            col.replace(new)
        return node


    def _typeof(self, ctx: Ctx, node: exp.Expression) -> exp.Expression:
        calls = [n for n in node.find_all(exp.Anonymous) if n.name.upper() == "TYPEOF"]
        for call in calls:
            arg = call.expressions[0] if len(call.expressions) == 1 else None
            col = self.lookup_col(ctx, arg) if isinstance(arg, exp.Column) else None
            if col is None or col.typeof is None:
                raise ctx.err("TYPEOF is supported for a nullable column of a table (not a "
                              "literal, an expression, a NOT NULL, key, time attribute or "
                              "CHAR/VARCHAR column, or a column of a view or subquery): twinflow "
                              "cannot derive Flink's exact type name and nullability there",
                              call)
            literal = exp.Literal.string(col.typeof)
            if call is node:
                return literal
            call.replace(literal)
        return node


def key(node: exp.Expression) -> str:
    """A resolved expression's text, to compare expressions (it is not run)."""
    return node.sql(dialect="spark")


def referenced(node: exp.Expression) -> set[str]:
    """Plan fields referenced by a resolved expression."""
    return {c.name for c in node.find_all(exp.Column)}


def uniquify(names: list[str], taken: set[str] | None = None) -> list[str]:
    """Flink's rule for clashing names: the second ``id`` becomes ``id0``, the next ``id1``."""
    seen = {t.lower() for t in taken or ()}
    out = []
    for name in names:
        new, k = name, 0
        while new.lower() in seen:
            new, k = f"{name}{k}", k + 1
        seen.add(new.lower())
        out.append(new)
    return out
