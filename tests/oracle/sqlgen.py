"""Random valid Flink SQL over random typed tables: the SQL fuzzer's grammar (differential.py
``--family sql``), in the spirit of SQLsmith.

A round is two tables and a list of queries over them. ``t`` has a time attribute (ordered by
time, ties included, a watermark one second behind: no row is late in Flink's per-row watermarks
nor in twinflow's micro-batches, so a streaming result is the query's result), ``u`` has none.
Values are drawn to hurt: NULLs in every column, duplicates and ties, negative numbers, values
at the edge of their type, unicode, spaces, strings that are prefixes of each other.

Each query records the grammar rules it used (``Query.rules``), so a run reports per rule how
many queries were generated, refused, equal and different. A query is a tree of ``Query``
values (FROM may hold another), so a failing query can be shrunk by dropping its parts
(``shrinks``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

DDL = """CREATE TABLE t (
  id INT,
  k STRING,
  a INT,
  b BIGINT,
  d DOUBLE,
  m DECIMAL(10, 2),
  s STRING,
  f BOOLEAN,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
);
CREATE TABLE u (
  id INT,
  k STRING,
  c INT,
  s STRING
);
"""
STATISTICAL = ("STDDEV_POP", "STDDEV_SAMP", "STDDEV", "VAR_POP", "VAR_SAMP", "VARIANCE")
T_COLUMNS = {"id": "INT", "k": "STRING", "a": "INT", "b": "BIGINT", "d": "DOUBLE",
             "m": "DECIMAL", "s": "STRING", "f": "BOOLEAN", "ts": "TIMESTAMP"}
U_COLUMNS = {"id": "INT", "k": "STRING", "c": "INT", "s": "STRING"}

KEYS = ["a", "b", "B", "ab", None]
STRINGS = ["x", "X", "xy", "é", "日本", " pad ", "a%b", "it's", "Ab", "zz", "46.5", " 7 ", "-0",
           "1e3", "Ünï cödé-x_y", '{"a":1,"b":[2.50,"x",{"c":null}]}', '[1e3,"é",-0]', None]
INTS = [0, 1, -1, 2, 3, -7, 10, 42, None]
EDGE_INTS = [2147483647, -2147483648]
BIGS = [0, 5, -5, 1234567890123, -9000000000, None]
DOUBLES = ["0.5", "-1.25", "3.0", "0.1", "1.0E10", "-0.0", "2.5", None]
DECIMALS = ["0.00", "1.50", "-2.25", "99999999.99", "3.10", None]
# JSON texts and paths for the JSON functions (besides the string columns, some JSON, most not).
JSON_TEXTS = ["'{\"a\":1,\"b\":[1,2.50,{\"c\":\"x\"}],\"n\":null}'", "'[1,\"é\",null,-0.0]'",
              "'{\"a\":{\"b\":1e3},\"a\":\"two\"}'", "'null'", "' 42 '", "'{\"a\":'"]
JSON_PATHS = ["$.a", "lax $.a", "strict $.b[1]", "$.b[2].c", "lax $.b", "$", "lax $[1]",
              "$[''a'']", "lax $.n", "$.a.b"]


def random_tables(rng: random.Random) -> dict[str, str]:
    """{table: CSV text}; empty fields are NULL (for both engines)."""
    def cell(v) -> str:
        if v is None:
            return ""
        text = str(v)
        return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"') else text

    t_rows, second = [], 0
    for i in range(rng.randint(4, 12)):
        second += rng.choice([0, 0, 1, 1, 2, 5])
        a = rng.choice(EDGE_INTS) if rng.random() < 0.04 else rng.choice(INTS)
        t_rows.append([i + 1, rng.choice(KEYS), a, rng.choice(BIGS), rng.choice(DOUBLES),
                       rng.choice(DECIMALS), rng.choice(STRINGS), rng.choice([True, False, None]),
                       f"2024-01-01 00:{second // 60:02d}:{second % 60:02d}.{rng.randint(0, 2)}00"])
    u_rows = [[rng.randint(1, 8), rng.choice(KEYS), rng.choice(INTS), rng.choice(STRINGS)]
              for _ in range(rng.randint(2, 8))]
    return {
        "t": "id,k,a,b,d,m,s,f,ts\n" + "".join(",".join(cell(v) for v in r) + "\n"
                                            for r in t_rows),
        "u": "id,k,c,s\n" + "".join(",".join(cell(v) for v in r) + "\n" for r in u_rows),
    }


@dataclass
class Query:
    """``SELECT [DISTINCT] items FROM source [WHERE ..] [GROUP BY ..] [HAVING ..]``; ``source``
    is a table (with joins) as text, or a subquery."""

    items: list[str]
    source: str | Query
    alias: str = ""
    where: list[str] = field(default_factory=list)
    group: list[str] = field(default_factory=list)
    having: list[str] = field(default_factory=list)
    distinct: bool = False
    rules: set[str] = field(default_factory=set)
    union: Query | None = None  # UNION ALL (``set_op``) of another query, same columns
    set_op: str = "UNION ALL"  # or INTERSECT, EXCEPT
    out: dict[str, str] = field(default_factory=dict)  # output column -> type, for a parent
    cte: bool = False  # the subquery in FROM written as WITH alias AS (..)

    def sql(self, indent: str = "") -> str:
        src = self.source if isinstance(self.source, str) else self.alias if self.cte else \
            f"(\n{self.source.sql(indent + '  ')}\n{indent}) {self.alias}"
        head = f"{indent}WITH {self.alias} AS (\n{self.source.sql(indent + '  ')}\n{indent})\n" \
            if self.cte and isinstance(self.source, Query) else ""
        text = head + (f"{indent}SELECT {'DISTINCT ' if self.distinct else ''}"
                f"{', '.join(self.items)}\n{indent}FROM {src}")
        if self.where:
            text += f"\n{indent}WHERE " + " AND ".join(self.where)
        if self.group:
            text += f"\n{indent}GROUP BY " + ", ".join(self.group)
        if self.having:
            text += f"\n{indent}HAVING " + " AND ".join(self.having)
        if self.union is not None:
            text += f"\n{indent}{self.set_op}\n" + self.union.sql(indent)
        return text

    def all_rules(self) -> set[str]:
        rules = set(self.rules)
        if isinstance(self.source, Query):
            rules |= self.source.all_rules()
        if self.union is not None:
            rules |= self.union.all_rules()
        return rules


def shrinks(q: Query) -> list[Query]:
    """Smaller variants of ``q``: one part left out (an item, a condition, the DISTINCT, a
    union branch, a level of subquery); each may or may not be valid SQL."""
    out: list[Query] = []
    if len(q.items) > 1 and not q.union:
        out += [replace(q, items=q.items[:i] + q.items[i + 1:]) for i in range(len(q.items))]
    for name in ("where", "having"):
        parts = getattr(q, name)
        out += [replace(q, **{name: parts[:i] + parts[i + 1:]}) for i in range(len(parts))]
    if q.distinct:
        out.append(replace(q, distinct=False))
    if q.union is not None:
        out += [replace(q, union=None), q.union]
    if isinstance(q.source, Query):
        out += [replace(q, source=s) for s in shrinks(q.source)]
    return out


class Gen:
    """Expressions of a type over columns in scope ({name: type}), and queries."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.rules: set[str] = set()

    def pick(self, options):
        return self.rng.choice(options)

    def use(self, rule: str) -> None:
        self.rules.add(rule)

    # -- expressions ---------------------------------------------------------------------
    def cols(self, scope: dict[str, str], kind: str) -> list[str]:
        return [c for c, t in scope.items() if t == kind]

    def expr(self, scope: dict[str, str], kind: str, depth: int = 2) -> str:
        cols = self.cols(scope, kind)
        if depth <= 0 or self.rng.random() < 0.35:
            if cols and self.rng.random() < 0.8:
                return self.pick(cols)
            return self.literal(kind)
        return getattr(self, f"_{kind.lower()}")(scope, depth - 1)

    def literal(self, kind: str) -> str:
        r = self.rng
        return {
            "INT": lambda: str(r.choice([0, 1, 2, 3, -1, 5, 100])),
            "BIGINT": lambda: f"CAST({r.choice([0, 7, -3, 10000000000])} AS BIGINT)",
            "DOUBLE": lambda: r.choice(["0.5E0", "2.0E0", "-1.5E0", "1.0E0"]),
            "DECIMAL": lambda: r.choice(["1.5", "0.25", "-3.00", "10"]),
            "STRING": lambda: r.choice(["'x'", "'é'", "'ab'", "''", "' pad '", "'X'"]),
            "BOOLEAN": lambda: r.choice(["TRUE", "FALSE"]),
            "TIMESTAMP": lambda: "TIMESTAMP '2024-01-01 00:00:05.000'",
        }[kind]()

    def _int(self, scope, depth) -> str:
        e = lambda k="INT": self.expr(scope, k, depth)  # noqa: E731
        choice = self.rng.randint(0, 14)
        if choice == 11:
            func = self.pick(["SIGN", "TRUNCATE"])
            self.use(f"expr.{func}")
            return f"{func}({e()})"
        if choice == 12:
            func = self.pick(["LOCATE", "POSITION", "ASCII", "INSTR", "ARRAY_POSITION"])
            self.use(f"expr.{func}")
            a, b = e("STRING"), e("STRING")
            return {"LOCATE": f"LOCATE({a}, {b})", "POSITION": f"POSITION({a} IN {b})",
                    "ASCII": f"ASCII({a})", "INSTR": f"INSTR({a}, {b})",
                    "ARRAY_POSITION": f"ARRAY_POSITION(ARRAY[{e()}, {e()}], {e()})"}[func]
        if choice == 13:
            func = self.pick(["GREATEST", "LEAST"])
            self.use(f"expr.{func}")
            return f"{func}({e()}, {e()})"
        if choice == 14:
            self.use("expr.try_cast")
            return f"TRY_CAST({e('STRING')} AS {self.pick(['INT', 'BIGINT'])})"
        if choice == 0:
            self.use("expr.arith")
            return f"({e()} {self.pick(['+', '-', '*'])} {e()})"
        if choice == 1:
            self.use("expr.ABS")
            return f"ABS({e()})"
        if choice == 2:
            self.use("expr.MOD")
            return f"MOD({e()}, {self.pick(['2', '3', '-4'])})"
        if choice == 3:
            self.use("expr.CHAR_LENGTH")
            return f"CHAR_LENGTH({e('STRING')})"
        if choice == 4:
            self.use("expr.case")
            return f"CASE WHEN {e('BOOLEAN')} THEN {e()} ELSE {e()} END"
        if choice == 5:
            func = self.pick(["COALESCE", "IFNULL"])
            self.use(f"expr.{func}")
            return f"{func}({e()}, {self.literal('INT')})"
        if choice == 6:
            self.use("expr.cast")
            return f"CAST({self.pick([e('DOUBLE'), e('DECIMAL'), e('BIGINT')])} AS INT)"
        if choice == 7:
            self.use("expr.EXTRACT")
            return f"EXTRACT({self.pick(['SECOND', 'MINUTE', 'DAY'])} FROM " \
                   f"{self.expr(scope, 'TIMESTAMP', 0)})" if self.cols(scope, "TIMESTAMP") \
                else f"({e()} / {self.pick(['2', '-3'])})"
        if choice == 8:
            self.use("expr.div")
            return f"({e()} / {self.pick(['2', '-3', '7'])})"
        if choice == 9:
            self.use("expr.IF")
            return f"IF({e('BOOLEAN')}, {e()}, {e()})"
        self.use("expr.NULLIF")
        return f"NULLIF({e()}, {self.literal('INT')})"

    def _bigint(self, scope, depth) -> str:
        e = lambda k="BIGINT": self.expr(scope, k, depth)  # noqa: E731
        if self.rng.random() < 0.5:
            self.use("expr.arith")
            return f"({e()} {self.pick(['+', '-'])} {self.expr(scope, 'INT', depth)})"
        ts = self.cols(scope, "TIMESTAMP")
        if ts and self.rng.random() < 0.2:  # text it reads: of a timestamp, in the format
            self.use("expr.UNIX_TIMESTAMP")
            fmt = self.pick(["yyyy-MM-dd HH:mm:ss", "yyyyMMddHHmm", "HH:mm:ss' on 'dd/MM/yyyy"])
            fmt = fmt.replace("'", "''")
            return f"UNIX_TIMESTAMP(DATE_FORMAT({ts[0]}, '{fmt}'), '{fmt}')"
        self.use("expr.cast")
        return f"CAST({self.expr(scope, 'INT', depth)} AS BIGINT)"

    def _double(self, scope, depth) -> str:
        e = lambda k="DOUBLE": self.expr(scope, k, depth)  # noqa: E731
        choice = self.rng.randint(0, 7)
        if choice == 6:
            func = self.pick(["LN", "LOG10", "LOG2", "EXP", "SIN", "COS", "ATAN", "DEGREES",
                              "SIGN", "TANH"])
            self.use(f"expr.{func}")
            return f"{func}({e()})"
        if choice == 7:
            func = self.pick(["TRUNCATE", "GREATEST", "LEAST", "LOG", "ATAN2"])
            self.use(f"expr.{func}")
            if func == "TRUNCATE":
                return f"TRUNCATE({e()}, {self.pick(['0', '1', '2'])})"
            return f"{func}({e()}, {e()})"
        if choice == 0:
            self.use("expr.arith")
            return f"({e()} {self.pick(['+', '-', '*'])} {self.pick([e(), e('INT')])})"
        if choice == 1:
            self.use("expr.ROUND")
            return f"ROUND({e()}, {self.pick(['0', '1', '2'])})"
        if choice == 2:
            self.use("expr.FLOOR_CEIL")
            return f"{self.pick(['FLOOR', 'CEIL'])}({e()})"
        if choice == 3:
            self.use("expr.SQRT")
            return f"SQRT(ABS({e()}))"
        if choice == 4:
            self.use("expr.POWER")
            return f"POWER({e()}, 2)"
        self.use("expr.cast")
        return f"CAST({self.expr(scope, 'INT', depth)} AS DOUBLE)"

    def _decimal(self, scope, depth) -> str:
        e = lambda k="DECIMAL": self.expr(scope, k, depth)  # noqa: E731
        if self.rng.random() < 0.6:
            self.use("expr.decimal_arith")
            return f"({e()} {self.pick(['+', '-'])} {self.pick([e(), e('INT')])})"
        self.use("expr.ROUND")
        return f"ROUND({e()}, 1)"

    def _json_doc(self, scope, depth) -> str:
        return self.pick([self.expr(scope, "STRING", depth), self.pick(JSON_TEXTS)])

    def _json_path(self) -> str:
        return f"'{self.pick(JSON_PATHS)}'"

    def _json(self, scope, depth) -> str:
        """A JSON function's string (read from a document, or written from values), or
        PRINTF's."""
        func = self.pick(["JSON_VALUE", "JSON_QUERY", "JSON_STRING", "JSON_OBJECT",
                          "JSON_ARRAY", "PRINTF"])
        self.use(f"expr.{func}")
        doc, path = self._json_doc(scope, depth), self._json_path()
        kinds = ["INT", "BIGINT", "DOUBLE", "DECIMAL", "STRING", "BOOLEAN"]
        v = lambda: self.expr(scope, self.pick(kinds), depth)  # noqa: E731
        if func == "JSON_VALUE":
            clause = self.pick(["", " DEFAULT 'e' ON EMPTY", " NULL ON EMPTY DEFAULT 'r' ON ERROR"])
            return f"JSON_VALUE({doc}, {path}{clause})"
        if func == "JSON_QUERY":
            wrapper = self.pick(["", " WITH WRAPPER", " WITH CONDITIONAL ARRAY WRAPPER"])
            clause = self.pick(["", " EMPTY ARRAY ON EMPTY", " EMPTY OBJECT ON ERROR"])
            return f"JSON_QUERY({doc}, {path}{wrapper}{clause})"
        if func == "JSON_STRING":
            return f"JSON_STRING({v()})"
        if func == "PRINTF":
            fmt = self.pick(["%s|%s", "%-5s|%S", "%d|%s", "%.2f|%b", "%x %08.3e", "%s %s %s"])
            return f"PRINTF('{fmt}', {v()}, {v()})"
        if func == "JSON_OBJECT":
            on_null = self.pick(["", " ABSENT ON NULL"])
            nested = self.pick([v(), f"JSON_ARRAY({v()})"])
            return f"JSON_OBJECT('k' VALUE {v()}, KEY 'a' VALUE {nested}{on_null})"
        return f"JSON_ARRAY({v()}, {v()}{self.pick(['', ' NULL ON NULL'])})"

    def _string(self, scope, depth) -> str:
        e = lambda k="STRING": self.expr(scope, k, depth)  # noqa: E731
        choice = self.rng.randint(0, 14)
        if choice == 14:
            return self._json(scope, depth)
        if choice == 10:
            func = self.pick(["LPAD", "RPAD"])
            self.use(f"expr.{func}")
            return f"{func}({e()}, {self.pick(['3', '0', '-1'])}, {self.pick(['*', 'ab'])!r})"
        if choice == 11:
            func = self.pick(["INITCAP", "REVERSE", "LTRIM", "RTRIM", "MD5", "TO_BASE64",
                              "SHA224", "HEX", "URL_ENCODE"])
            self.use(f"expr.{func}")
            return f"{func}({e()})"
        if choice == 12:
            func = self.pick(["REPLACE", "OVERLAY", "LEFT", "RIGHT", "REPEAT", "TRANSLATE",
                              "ARRAY_JOIN", "STR_TO_MAP"])
            self.use(f"expr.{func}")
            n = self.pick(["2", "0", "-1", "5"])
            return {"REPLACE": f"REPLACE({e()}, {e()}, '#')",
                    "TRANSLATE": f"TRANSLATE({e()}, {e()}, 'xy')",
                    "STR_TO_MAP": f"STR_TO_MAP(CONCAT({e()}, ',a=', {e()}, ',', {e()}), "
                                  f"',', {self.pick(['=', 'x'])!r})['a']",
                    "ARRAY_JOIN": f"ARRAY_JOIN(ARRAY_SORT(SPLIT({e()}, "
                                  f"{self.pick(['a', ' ', ''])!r})), '|')",
                    "OVERLAY": f"OVERLAY({e()} PLACING {e()} FROM {self.pick(['1', '2', '4'])}"
                               f" FOR {self.pick(['0', '1', '3'])})",
                    "LEFT": f"`LEFT`({e()}, {n})", "RIGHT": f"`RIGHT`({e()}, {n})",
                    "REPEAT": f"REPEAT({e()}, {n})"}[func]
        if choice == 13:
            self.use("expr.time_part")
            ts = self.cols(scope, "TIMESTAMP")
            part = self.pick(["HOUR", "MINUTE", "SECOND", "DAYOFWEEK", "WEEK", "QUARTER"])
            return f"CAST({part}({ts[0]}) AS STRING)" if ts else e()
        if choice == 0:
            self.use("expr.UPPER_LOWER")
            return f"{self.pick(['UPPER', 'LOWER'])}({e()})"
        if choice == 1:
            self.use("expr.CONCAT")
            return f"CONCAT({e()}, {e()})"
        if choice == 2:
            self.use("expr.SUBSTRING")
            return f"SUBSTRING({e()}, {self.pick(['1', '2', '0'])}, {self.pick(['1', '2', '5'])})"
        if choice == 3:
            self.use("expr.TRIM")
            return f"TRIM({e()})"
        if choice == 4:
            self.use("expr.cast")
            arg = self.pick([self.expr(scope, "INT", depth), e("BOOLEAN"), e("DECIMAL")])
            return f"CAST({arg} AS STRING)"
        if choice == 5:
            self.use("expr.case")
            return f"CASE WHEN {e('BOOLEAN')} THEN {e()} ELSE {e()} END"
        if choice == 6:
            self.use("expr.COALESCE")
            end = self.pick([self.literal("STRING"), "CURRENT_DATABASE()"])
            if end == "CURRENT_DATABASE()":
                self.use("expr.CURRENT_DATABASE")
            return f"COALESCE({e()}, {end})"
        if choice == 7:
            self.use("expr.CONCAT_WS")
            return f"CONCAT_WS('-', {e()}, {e()})"
        if choice == 8:
            self.use("expr.REGEXP_REPLACE")
            return f"REGEXP_REPLACE({e()}, '[a-x]', '_')"
        ts = self.cols(scope, "TIMESTAMP")
        if ts and self.rng.random() < 0.3:
            self.use("expr.CONVERT_TZ")
            zone = self.pick(["'Asia/Shanghai'", "'America/New_York'", "'XYZ'", "'GMT+05:30'"])
            return f"CONVERT_TZ(DATE_FORMAT({ts[0]}, 'yyyy-MM-dd HH:mm:ss'), 'UTC', {zone})"
        self.use("expr.DATE_FORMAT")
        return f"DATE_FORMAT({ts[0]}, 'HH:mm:ss')" if ts else e()

    def _boolean(self, scope, depth) -> str:
        kind = self.pick(["INT", "INT", "STRING", "DOUBLE", "DECIMAL", "BIGINT"])
        e = lambda k=kind: self.expr(scope, k, depth)  # noqa: E731
        choice = self.rng.randint(0, 10)
        if choice == 9:
            self.use("expr.is_distinct")
            return f"{e()} IS {self.pick(['', 'NOT '])}DISTINCT FROM {e()}"
        if choice == 10:
            func = self.pick(["REGEXP", "IS_ALPHA", "IS_DIGIT", "IS_DECIMAL", "SIMILAR TO",
                              "ARRAY_CONTAINS", "JSON_EXISTS", "IS JSON", "OVERLAPS"])
            self.use(f"expr.{func}")
            if func == "OVERLAPS":
                ts = self.cols(scope, "TIMESTAMP") or [self.literal("TIMESTAMP")]
                end = lambda: self.pick(  # noqa: E731
                    [*ts, self.literal("TIMESTAMP"), "INTERVAL '2' SECOND",
                     "INTERVAL '-1' SECOND"])
                return f"({self.pick(ts)}, {end()}) OVERLAPS ({self.literal('TIMESTAMP')}, " \
                       f"{end()})"
            if func == "JSON_EXISTS":
                on_error = self.pick(["", " TRUE ON ERROR", " UNKNOWN ON ERROR"])
                return (f"JSON_EXISTS({self._json_doc(scope, depth)}, {self._json_path()}"
                        f"{on_error})")
            if func == "IS JSON":
                kind = self.pick(["", " VALUE", " SCALAR", " ARRAY", " OBJECT"])
                return f"{self._json_doc(scope, depth)} IS {self.pick(['', 'NOT '])}JSON{kind}"
            if func == "REGEXP":
                return f"REGEXP({e('STRING')}, {self.pick(['[a-z]+', '^x', '[0-9]'])!r})"
            if func == "SIMILAR TO":
                return f"{e('STRING')} SIMILAR TO {self.pick(['%a_', '(x|y)%', '[0-9]+'])!r}"
            if func == "ARRAY_CONTAINS":
                return f"ARRAY_CONTAINS(ARRAY[{e('INT')}, {e('INT')}], {e('INT')})"
            return f"{func}({e('STRING')})"
        if choice <= 2:
            self.use("expr.compare")
            return f"{e()} {self.pick(['=', '<>', '<', '<=', '>', '>='])} {e()}"
        if choice == 3:
            self.use("expr.is_null")
            return f"{e()} IS {self.pick(['', 'NOT '])}NULL"
        if choice == 4:
            form = self.pick(["BETWEEN", "BETWEEN SYMMETRIC", "NOT BETWEEN SYMMETRIC"])
            self.use("expr.between" if form == "BETWEEN" else "expr.between_symmetric")
            return f"{e('INT')} {form} {self.literal('INT')} AND {self.literal('INT')}"
        if choice == 5:
            self.use("expr.in_list")
            return f"{e('INT')} {self.pick(['', 'NOT '])}IN (1, 2, {self.literal('INT')})"
        if choice == 6:
            self.use("expr.LIKE")
            return f"{e('STRING')} LIKE '{self.pick(['x%', '%b', '_', '%é%', 'a_b'])}'"
        if choice == 7:
            self.use("expr.bool_logic")
            return f"({self.expr(scope, 'BOOLEAN', depth)} {self.pick(['AND', 'OR'])} " \
                   f"{self.expr(scope, 'BOOLEAN', depth)})"
        self.use("expr.NOT")
        return f"NOT ({self.expr(scope, 'BOOLEAN', depth)})"

    def _timestamp(self, scope, depth) -> str:
        return self.pick(self.cols(scope, "TIMESTAMP") or [self.literal("TIMESTAMP")])

    def condition(self, scope: dict[str, str]) -> str:
        return self.expr(scope, "BOOLEAN", 2) if self.rng.random() < 0.8 else \
            self._boolean(scope, 1)

    def value(self, scope: dict[str, str]) -> tuple[str, str]:
        """A projected expression of a random type: (SQL, type)."""
        kind = self.pick(["INT", "INT", "BIGINT", "DOUBLE", "DECIMAL", "STRING", "STRING",
                          "BOOLEAN"])
        return self.expr(scope, kind, 2), kind

    # -- aggregates ----------------------------------------------------------------------
    def aggregate(self, scope: dict[str, str]) -> tuple[str, str]:
        func = self.pick(["COUNT*", "COUNT", "SUM", "AVG", "MIN", "MAX", "SUM", "COUNTD",
                          "STAT", "FIRST_VALUE", "LAST_VALUE", "LISTAGG"])
        if func == "STAT":
            func = self.pick(list(STATISTICAL))
        if func == "LISTAGG" and self.rng.random() < 0.3:  # Flink parses no FILTER after it
            self.use("agg.JSON_ARRAYAGG")
            arg = self.expr(scope, self.pick(["INT", "STRING", "DOUBLE", "DECIMAL"]), 1)
            on_null = self.pick(["", " NULL ON NULL", " ABSENT ON NULL"])
            return f"JSON_ARRAYAGG({arg}{on_null})", "STRING"
        kind = self.pick(["INT", "INT", "BIGINT", "DOUBLE", "DECIMAL"])
        if func in ("MIN", "MAX", "COUNT", "FIRST_VALUE", "LAST_VALUE", "LISTAGG") and (
                func == "LISTAGG" or self.rng.random() < 0.3):
            kind = "STRING"
        arg = self.expr(scope, kind, 1)
        self.use(f"agg.{func}")
        if func == "LISTAGG" and self.rng.random() < 0.5:
            call, out = f"LISTAGG({arg}, '{self.pick(['|', '', ', '])}')", "STRING"
        elif func == "COUNT*":
            call, out = "COUNT(*)", "BIGINT"
        elif func == "COUNTD":
            call, out = f"COUNT(DISTINCT {arg})", "BIGINT"
        elif func == "COUNT":
            call, out = f"COUNT({arg})", "BIGINT"
        elif func in ("SUM", "AVG") and self.rng.random() < 0.15:
            self.use("agg.distinct")
            call, out = f"{func}(DISTINCT {arg})", kind
        else:
            call, out = f"{func}({arg})", kind
        if self.rng.random() < 0.2:
            self.use("agg.filter")
            call += f" FILTER (WHERE {self.condition(scope)})"
        return call, out

    # -- queries -------------------------------------------------------------------------
    def query(self) -> Query:
        shape = self.pick(["project", "project", "aggregate", "aggregate", "group", "group",
                           "group", "join", "join", "subquery", "union", "in", "exists",
                           "over", "topn", "window", "distinct"])
        self.rules = {f"shape.{shape}"}
        q = getattr(self, f"_{shape}")()
        q.rules |= self.rules
        return q

    def _items(self, scope, n: int | None = None) -> tuple[list[str], dict[str, str]]:
        values = [self.value(scope) for _ in range(n or self.rng.randint(1, 4))]
        return [f"{v} AS c{i}" for i, (v, _) in enumerate(values)], \
            {f"c{i}": k for i, (_, k) in enumerate(values)}

    def _where(self, scope, p: float = 0.7) -> list[str]:
        out = []
        while self.rng.random() < p and len(out) < 3:
            self.use("clause.where")
            out.append(self.condition(scope))
            p *= 0.5
        return out

    def _project(self) -> Query:
        items, out = self._items(T_COLUMNS)
        return Query(items, "t", where=self._where(T_COLUMNS), out=out)

    def _distinct(self) -> Query:
        scope = {c: T_COLUMNS[c] for c in self.rng.sample(["k", "a", "f", "s"], 2)}
        return Query(self._items(scope, 2)[0], "t", where=self._where(T_COLUMNS), distinct=True)

    def _aggregate(self) -> Query:
        self.use("agg.global")
        aggs = [f"{self.aggregate(T_COLUMNS)[0]} AS c{i}" for i in range(self.rng.randint(1, 3))]
        return Query(aggs, "t", where=self._where(T_COLUMNS, 0.85))

    def _group(self, scope: dict[str, str] | None = None, source: str | Query = "t",
               alias: str = "") -> Query:
        scope = scope or T_COLUMNS
        keys = self.rng.sample([c for c in scope if scope[c] != "TIMESTAMP"],
                               self.rng.randint(1, 2))
        group, items = list(keys), list(keys)
        out = {k.split(".")[-1]: scope[k] for k in keys}
        if self.rng.random() < 0.3:
            self.use("group.expression")
            ints, strings = self.cols(scope, "INT") or ["1"], self.cols(scope, "STRING") or ["'x'"]
            e = self.pick([f"MOD(COALESCE({self.pick(ints)}, 0), 3)",
                           f"UPPER({self.pick(strings)})"])
            group.append(e)
            items.append(f"{e} AS gx")
            out["gx"] = "INT" if e.startswith("MOD") else "STRING"
        for i in range(self.rng.randint(1, 3)):
            call, kind = self.aggregate(scope)
            items.append(f"{call} AS c{i}")
            out[f"c{i}"] = kind
        if self.rng.random() < 0.25:  # grouping sets over the keys, and GROUPING of them
            form = self.pick(["ROLLUP", "CUBE", "GROUPING SETS"])
            self.use(f"group.{form.split()[-1].lower()}")
            listed = ", ".join(group)
            again = self.pick(["", f", ({group[0]})", ", ()"])  # a set listed twice
            group = [f"ROLLUP ({listed})" if form == "ROLLUP" else f"CUBE ({listed})"
                     if form == "CUBE" else f"GROUPING SETS (({listed}), ({group[0]}), (){again})"]
            items.append(f"{self.pick(['GROUPING', 'GROUPING_ID'])}({listed}) AS gid")
            out["gid"] = "BIGINT"
            if again or self.rng.random() < 0.3:
                self.use("expr.GROUP_ID")
                items.append("GROUP_ID() AS gno")
                out["gno"] = "BIGINT"
        having = []
        if self.rng.random() < 0.35:
            self.use("clause.having")
            agg = self.aggregate(scope)
            bound = self.literal("INT") if agg[1] != "STRING" else "'x'"
            having.append(f"{agg[0]} {self.pick(['>', '>=', '<', '<>'])} {bound}")
        return Query(items, source, alias=alias, where=self._where(scope), group=group,
                     having=having, out=out)

    def _join(self) -> Query:
        kind = self.pick(["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "JOIN"])
        self.use(f"join.{kind.split()[0].lower()}")
        on = self.pick(["t.k = u.k", "t.id = u.id", "t.a = u.c", "t.k = u.k AND t.a <> u.c"])
        scope = {**{f"t.{c}": v for c, v in T_COLUMNS.items() if c != "ts"},
                 **{f"u.{c}": v for c, v in U_COLUMNS.items()}}
        source = f"t {kind} u ON {on}"
        if self.rng.random() < 0.4:
            self.use("join.then_group")
            return self._group(scope, source)
        return Query(self._items(scope)[0], source, where=self._where(scope, 0.5))

    def _subquery(self) -> Query:
        self.use("subquery.from")
        inner = self._group() if self.rng.random() < 0.5 else self._project()
        scope = inner.out
        cte = self.rng.random() < 0.4
        if cte:
            self.use("subquery.with")
        return Query(self._items(scope)[0], inner, alias="q", where=self._where(scope, 0.6),
                     cte=cte)

    def _union(self) -> Query:
        op = self.pick(["UNION ALL", "UNION ALL", "INTERSECT", "EXCEPT"])
        self.use("union.all" if op == "UNION ALL" else f"setop.{op.lower()}")
        # (INTERSECT / EXCEPT refuse DOUBLE columns: Flink tells -0.0 from 0.0 there)
        types = ["INT", "STRING", "DOUBLE"] if op == "UNION ALL" else ["INT", "STRING"]
        kinds = [self.pick(types) for _ in range(self.rng.randint(1, 2))]
        parts = [Query([f"{self.expr(T_COLUMNS, k, 1)} AS c{i}" for i, k in enumerate(kinds)],
                       "t", where=self._where(T_COLUMNS, 0.6)) for _ in range(2)]
        inner = replace(parts[0], union=parts[1], set_op=op)
        if self.rng.random() < 0.5:
            self.use("union.then_group")
            return Query(["c0", "COUNT(*) AS n"], inner, alias="un", group=["c0"])
        return inner

    def _in(self) -> Query:
        neg = self.pick(["", "NOT "])
        self.use(f"subquery.{neg.strip().lower() or 'in'}_in")
        col = self.pick([("k", "k"), ("a", "c"), ("id", "id")])
        inner = f"SELECT {col[1]} FROM u" + (f" WHERE {self.condition(U_COLUMNS)}"
                                             if self.rng.random() < 0.5 else "")
        return Query(self._items(T_COLUMNS, 2)[0], "t",
                     where=[f"{col[0]} {neg}IN ({inner})"] + self._where(T_COLUMNS, 0.4))

    def _exists(self) -> Query:
        neg = self.pick(["", "NOT "])
        self.use(f"subquery.{neg.strip().lower() or 'exists'}_exists")
        cond = "u.k = t.k" + (" AND u.c > t.a" if self.rng.random() < 0.3 else "")
        return Query(self._items(T_COLUMNS, 2)[0], "t",
                     where=[f"{neg}EXISTS (SELECT 1 FROM u WHERE {cond})"])

    def _over(self) -> Query:
        kind = self.pick(["ROWS", "RANGE"])
        self.use(f"over.{kind.lower()}")
        if kind == "ROWS":
            frame = self.pick(["UNBOUNDED PRECEDING", "1 PRECEDING", "3 PRECEDING"])
        else:
            frame = self.pick(["UNBOUNDED PRECEDING", "INTERVAL '2' SECOND PRECEDING"])
        part = self.pick(["PARTITION BY k ", "PARTITION BY f ", ""])
        window = f"({part}ORDER BY ts {kind} BETWEEN {frame} AND CURRENT ROW)"
        aggs = []
        for i in range(self.rng.randint(1, 3)):
            func = self.pick(["COUNT", "SUM", "MIN", "MAX", "AVG", "STAT"])
            if func == "STAT":  # INT, BIGINT, DOUBLE (FLOAT, DECIMAL are refused over OVER)
                func = self.pick(list(STATISTICAL))
            self.use(f"over.{func}")
            arg = self.pick(["a", "d", "b", "b"] if func in STATISTICAL else
                            ["a", "d", "m", "b", "*" if func == "COUNT" else "a"])
            aggs.append(f"{func}({arg}) OVER {window} AS w{i}")
        return Query(["id", "k", *aggs], "t", where=self._where(T_COLUMNS, 0.4))

    def _topn(self) -> Query:
        func = self.pick(["ROW_NUMBER", "ROW_NUMBER", "RANK", "DENSE_RANK"])
        self.use(f"topn.{func.lower()}")
        order = self.pick(["a DESC, id", "d, id", "ts DESC, id", "s, id", "a"])
        part = self.pick(["PARTITION BY k ", ""])
        inner = Query(["id", "k", "a", "s", f"{func}() OVER ({part}ORDER BY {order}) AS rn"],
                      "t", where=self._where(T_COLUMNS, 0.4))
        keep = ["id", "k", "a", "s"] + (["rn"] if self.rng.random() < 0.6 else [])
        return Query(keep, inner, alias="r",
                     where=[f"rn <= {self.pick(['1', '2', '3'])}"])

    def _window(self) -> Query:
        kind = self.pick(["TUMBLE", "HOP", "CUMULATE", "GROUP"])
        self.use(f"window.{kind.lower()}")
        aggs = [f"{self.aggregate(T_COLUMNS)[0]} AS c{i}" for i in range(self.rng.randint(1, 2))]
        keyed = self.rng.random() < 0.5
        if kind == "GROUP":
            return Query([*(["k"] if keyed else []), "TUMBLE_START(ts, INTERVAL '5' SECOND) AS ws",
                          *aggs], "t", where=self._where(T_COLUMNS, 0.5),
                         group=["TUMBLE(ts, INTERVAL '5' SECOND)", *(["k"] if keyed else [])])
        args = {"TUMBLE": "INTERVAL '5' SECOND", "HOP": "INTERVAL '2' SECOND, INTERVAL '6' SECOND",
                "CUMULATE": "INTERVAL '2' SECOND, INTERVAL '6' SECOND"}[kind]
        return Query([*(["k"] if keyed else []), "window_start", "window_end", *aggs],
                     f"TABLE({kind}(TABLE t, DESCRIPTOR(ts), {args}))",
                     where=self._where(T_COLUMNS, 0.5),
                     group=["window_start", "window_end", *(["k"] if keyed else [])])

