"""Every entry of Flink 2.3's built-in functions page (docs/data/sql_functions.yml in
apache/flink: its SQL forms, by family), each planned by twinflow in a sample query: supported
(with the oracle case that checks it against Flink) or refused (with twinflow's reason).

    .venv/bin/python tests/oracle/function_catalog.py      # writes docs/FUNCTIONS.md

tests/test_function_catalog.py regenerates the table and requires it to equal the committed
one, and every supported entry to have its case.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

DDL = """CREATE TABLE t (
  s STRING, s2 STRING, n INT, n2 INT, d DOUBLE, m DECIMAL(10, 2), b BOOLEAN,
  ts TIMESTAMP(3), dt DATE, ts2 TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
);
CREATE TABLE u (k STRING, v INT);
"""
DOC = REPO / "docs" / "FUNCTIONS.md"
CASES = REPO / "tests" / "cases"

# (family, the page's SQL form, a query using it, the word its oracle case contains)
ENTRIES: list[tuple[str, str, str, str]] = [
    *[("comparison", f"value1 {op} value2", f"SELECT n {op} n2 AS x FROM t", op)
      for op in ("=", "<>", ">", ">=", "<", "<=")],
    ("comparison", "value IS NULL", "SELECT s IS NULL AS x FROM t", "IS NULL"),
    ("comparison", "value IS NOT NULL", "SELECT s IS NOT NULL AS x FROM t", "IS NOT NULL"),
    ("comparison", "value1 IS DISTINCT FROM value2", "SELECT s IS DISTINCT FROM s2 AS x FROM t",
     "IS DISTINCT FROM"),
    ("comparison", "value1 IS NOT DISTINCT FROM value2",
     "SELECT s IS NOT DISTINCT FROM s2 AS x FROM t", "IS NOT DISTINCT FROM"),
    ("comparison", "value1 BETWEEN value2 AND value3",
     "SELECT n BETWEEN 1 AND n2 AS x FROM t", "BETWEEN"),
    ("comparison", "value1 BETWEEN SYMMETRIC value2 AND value3",
     "SELECT n BETWEEN SYMMETRIC 5 AND 1 AS x FROM t", "SYMMETRIC"),
    ("comparison", "value1 NOT BETWEEN value2 AND value3",
     "SELECT n NOT BETWEEN 1 AND n2 AS x FROM t", "NOT BETWEEN"),
    ("comparison", "string1 LIKE string2 [ESCAPE char]", "SELECT s LIKE 'a%' AS x FROM t",
     "LIKE"),
    ("comparison", "string1 NOT LIKE string2", "SELECT s NOT LIKE 'a%' AS x FROM t",
     "NOT LIKE"),
    ("comparison", "string1 SIMILAR TO string2", "SELECT s SIMILAR TO 'a%' AS x FROM t",
     "SIMILAR TO"),
    ("comparison", "string1 NOT SIMILAR TO string2",
     "SELECT s NOT SIMILAR TO 'a%' AS x FROM t", "NOT SIMILAR TO"),
    ("comparison", "value1 IN (value2, ...)", "SELECT n IN (1, 2, 3) AS x FROM t", " IN ("),
    ("comparison", "value1 NOT IN (value2, ...)", "SELECT n NOT IN (1, 2) AS x FROM t",
     "NOT IN ("),
    ("comparison", "EXISTS (sub-query)",
     "SELECT s FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.k = t.s)", "EXISTS"),
    ("comparison", "value IN (sub-query)", "SELECT s FROM t WHERE s IN (SELECT k FROM u)",
     "IN (SELECT"),
    ("comparison", "value NOT IN (sub-query)",
     "SELECT s FROM t WHERE s NOT IN (SELECT k FROM u)", "NOT IN (SELECT"),
    ("logical", "boolean1 OR boolean2", "SELECT b OR n > 1 AS x FROM t", " OR "),
    ("logical", "boolean1 AND boolean2", "SELECT b AND n > 1 AS x FROM t", " AND "),
    ("logical", "NOT boolean", "SELECT NOT b AS x FROM t", "NOT "),
    *[("logical", f"boolean IS {w}", f"SELECT b IS {w} AS x FROM t", f"IS {w}")
      for w in ("FALSE", "NOT FALSE", "TRUE", "NOT TRUE", "UNKNOWN", "NOT UNKNOWN")],
    ("arithmetic", "+ numeric", "SELECT +n AS x FROM t", "+"),
    ("arithmetic", "- numeric", "SELECT -n AS x FROM t", "-"),
    *[("arithmetic", f"numeric1 {op} numeric2", f"SELECT n {op} n2 AS x FROM t", op)
      for op in ("+", "-", "*", "/", "%")],
    *[("arithmetic", f"{f}(numeric)", f"SELECT {f}(d) AS x FROM t", f"{f}(")
      for f in ("ABS", "SQRT", "LN", "LOG10", "LOG2", "EXP", "CEIL", "CEILING", "FLOOR", "SIN",
                "SINH", "COS", "TAN", "TANH", "COT", "ASIN", "ACOS", "ATAN", "COSH", "DEGREES",
                "RADIANS", "SIGN")],
    ("arithmetic", "POWER(numeric1, numeric2)", "SELECT POWER(d, 2) AS x FROM t", "POWER("),
    ("arithmetic", "LOG(numeric1, numeric2)", "SELECT LOG(2, d) AS x FROM t", "LOG("),
    ("arithmetic", "ATAN2(numeric1, numeric2)", "SELECT ATAN2(d, d) AS x FROM t", "ATAN2("),
    ("arithmetic", "ROUND(numeric, int)", "SELECT ROUND(d, 1) AS x FROM t", "ROUND("),
    ("arithmetic", "TRUNCATE(numeric1, integer2)", "SELECT TRUNCATE(d, 1) AS x FROM t",
     "TRUNCATE("),
    ("arithmetic", "PI()", "SELECT PI() AS x FROM t", "PI()"),
    ("arithmetic", "E()", "SELECT E() AS x FROM t", "E()"),
    ("arithmetic", "RAND([int])", "SELECT RAND() AS x FROM t", "RAND("),
    ("arithmetic", "RAND_INTEGER([int1,] int2)", "SELECT RAND_INTEGER(10) AS x FROM t",
     "RAND_INTEGER("),
    ("arithmetic", "UUID()", "SELECT UUID() AS x FROM t", "UUID("),
    ("arithmetic", "BIN(int)", "SELECT BIN(n) AS x FROM t", "BIN("),
    ("arithmetic", "HEX(numeric | string)", "SELECT HEX(n) AS x FROM t", "HEX("),
    ("string", "string1 || string2", "SELECT s || s2 AS x FROM t", "||"),
    *[("string", f"{f}(string)", f"SELECT {f}(s) AS x FROM t", f"{f}(")
      for f in ("CHAR_LENGTH", "CHARACTER_LENGTH", "UPPER", "LOWER", "LTRIM", "RTRIM",
                "INITCAP", "FROM_BASE64", "TO_BASE64", "ASCII", "REVERSE", "MD5", "SHA1",
                "SHA224", "SHA256", "SHA384", "SHA512", "IS_ALPHA", "IS_DECIMAL", "IS_DIGIT")],
    ("string", "POSITION(string1 IN string2)", "SELECT POSITION(s IN s2) AS x FROM t",
     "POSITION("),
    ("string", "TRIM([BOTH | LEADING | TRAILING] string1 FROM string2)",
     "SELECT TRIM(LEADING 'x' FROM s) AS x FROM t", "TRIM("),
    ("string", "REPEAT(string, int)", "SELECT REPEAT(s, n) AS x FROM t", "REPEAT("),
    ("string", "REGEXP_REPLACE(string1, string2, string3)",
     "SELECT REGEXP_REPLACE(s, 'a+', 'b') AS x FROM t", "REGEXP_REPLACE("),
    ("string", "OVERLAY(string1 PLACING string2 FROM integer1 [FOR integer2])",
     "SELECT OVERLAY(s PLACING s2 FROM 2 FOR 1) AS x FROM t", "OVERLAY("),
    ("string", "SUBSTRING(string FROM integer1 [FOR integer2])",
     "SELECT SUBSTRING(s FROM 2 FOR 3) AS x FROM t", "SUBSTRING("),
    ("string", "SUBSTR(string, integer1[, integer2])", "SELECT SUBSTR(s, 2, 3) AS x FROM t",
     "SUBSTR("),
    ("string", "REPLACE(string1, string2, string3)", "SELECT REPLACE(s, 'a', 'b') AS x FROM t",
     "REPLACE("),
    ("string", "REGEXP_EXTRACT(string1, string2[, integer])",
     "SELECT REGEXP_EXTRACT(s, 'a(b)', 1) AS x FROM t", "REGEXP_EXTRACT("),
    ("string", "CONCAT(string1, string2, ...)", "SELECT CONCAT(s, s2) AS x FROM t", "CONCAT("),
    ("string", "CONCAT_WS(string1, string2, ...)", "SELECT CONCAT_WS('-', s, s2) AS x FROM t",
     "CONCAT_WS("),
    ("string", "LPAD(string1, integer, string2)", "SELECT LPAD(s, 4, '*') AS x FROM t",
     "LPAD("),
    ("string", "RPAD(string1, integer, string2)", "SELECT RPAD(s, 4, '*') AS x FROM t",
     "RPAD("),
    ("string", "CHR(integer)", "SELECT CHR(n) AS x FROM t", "CHR("),
    ("string", "DECODE(binary, string)", "SELECT DECODE(ENCODE(s, 'UTF-8'), 'UTF-8') AS x "
     "FROM t", "DECODE("),
    ("string", "ENCODE(string1, string2)", "SELECT ENCODE(s, 'UTF-8') AS x FROM t", "ENCODE("),
    ("string", "INSTR(string1, string2)", "SELECT INSTR(s, s2) AS x FROM t", "INSTR("),
    ("string", "LEFT(string, integer)", "SELECT `LEFT`(s, 2) AS x FROM t", "LEFT`("),
    ("string", "RIGHT(string, integer)", "SELECT `RIGHT`(s, 2) AS x FROM t", "RIGHT`("),
    ("string", "LOCATE(string1, string2[, integer])", "SELECT LOCATE(s, s2, 2) AS x FROM t",
     "LOCATE("),
    ("string", "PARSE_URL(string1, string2[, string3])",
     "SELECT PARSE_URL(s, 'HOST') AS x FROM t", "PARSE_URL("),
    ("string", "REGEXP(string1, string2)", "SELECT REGEXP(s, 'a+') AS x FROM t", "REGEXP("),
    ("string", "SPLIT_INDEX(string1, string2, integer1)",
     "SELECT SPLIT_INDEX(s, ',', 1) AS x FROM t", "SPLIT_INDEX("),
    ("string", "STR_TO_MAP(string1[, string2, string3])",
     "SELECT STR_TO_MAP(s) AS x FROM t", "STR_TO_MAP("),
    ("string", "SHA2(string, hashLength)", "SELECT SHA2(s, 256) AS x FROM t", "SHA2("),
    ("string", "TRANSLATE(expr, fromStr, toStr)", "SELECT TRANSLATE(s, 'a', 'b') AS x FROM t",
     "TRANSLATE("),
    ("string", "ELT(index, expr[, exprs]*)", "SELECT ELT(n, s, s2) AS x FROM t", "ELT("),
    ("string", "SPLIT(string, delimiter)", "SELECT SPLIT(s, ',') AS x FROM t", "SPLIT("),
    ("string", "URL_ENCODE(string)", "SELECT URL_ENCODE(s) AS x FROM t", "URL_ENCODE("),
    ("string", "URL_DECODE(string)", "SELECT URL_DECODE(s) AS x FROM t", "URL_DECODE("),
    ("string", "PRINTF(format[, obj]*)", "SELECT PRINTF('%s-%d', s, n) AS x FROM t",
     "PRINTF("),
    ("temporal", "DATE string", "SELECT DATE '2024-01-31' AS x FROM t", "DATE '"),
    ("temporal", "TIME string", "SELECT TIME '10:15:00' AS x FROM t", "TIME '"),
    ("temporal", "TIMESTAMP string", "SELECT TIMESTAMP '2024-01-31 10:15:00.000' AS x FROM t",
     "TIMESTAMP '"),
    ("temporal", "INTERVAL string range", "SELECT ts + INTERVAL '1' DAY AS x FROM t",
     "INTERVAL '"),
    *[("temporal", f, f"SELECT {f} AS x FROM t", f)
      for f in ("LOCALTIME", "LOCALTIMESTAMP", "CURRENT_TIME", "CURRENT_DATE",
                "CURRENT_TIMESTAMP")],
    ("temporal", "NOW()", "SELECT NOW() AS x FROM t", "NOW("),
    ("temporal", "CURRENT_ROW_TIMESTAMP()", "SELECT CURRENT_ROW_TIMESTAMP() AS x FROM t",
     "CURRENT_ROW_TIMESTAMP("),
    ("temporal", "EXTRACT(timeintervalunit FROM temporal)",
     "SELECT EXTRACT(DAY FROM ts) AS x FROM t", "EXTRACT("),
    *[("temporal", f"{f}(date | timestamp)", f"SELECT {f}(ts) AS x FROM t", f"{f}(")
      for f in ("YEAR", "QUARTER", "MONTH", "WEEK", "DAYOFYEAR", "DAYOFMONTH", "DAYOFWEEK",
                "HOUR", "MINUTE", "SECOND")],
    ("temporal", "FLOOR(timepoint TO timeintervalunit)",
     "SELECT FLOOR(ts TO HOUR) AS x FROM t", "FLOOR(ts TO "),
    ("temporal", "CEIL(timepoint TO timeintervalunit)", "SELECT CEIL(ts TO HOUR) AS x FROM t",
     "CEIL(ts TO "),
    ("temporal", "(timepoint1, temporal1) OVERLAPS (timepoint2, temporal2)",
     "SELECT (ts, ts2) OVERLAPS (ts2, ts) AS x FROM t", "OVERLAPS"),
    ("temporal", "DATE_FORMAT(timestamp, string)",
     "SELECT DATE_FORMAT(ts, 'yyyy-MM-dd') AS x FROM t", "DATE_FORMAT("),
    ("temporal", "TIMESTAMPADD(timeintervalunit, interval, timepoint)",
     "SELECT TIMESTAMPADD(DAY, 1, ts) AS x FROM t", "TIMESTAMPADD("),
    ("temporal", "TIMESTAMPDIFF(timepointunit, timepoint1, timepoint2)",
     "SELECT TIMESTAMPDIFF(DAY, ts, ts2) AS x FROM t", "TIMESTAMPDIFF("),
    ("temporal", "CONVERT_TZ(string1, string2, string3)",
     "SELECT CONVERT_TZ(s, 'UTC', 'Asia/Tokyo') AS x FROM t", "CONVERT_TZ("),
    ("temporal", "FROM_UNIXTIME(numeric[, string])", "SELECT FROM_UNIXTIME(n) AS x FROM t",
     "FROM_UNIXTIME("),
    ("temporal", "UNIX_TIMESTAMP()", "SELECT UNIX_TIMESTAMP() AS x FROM t", "UNIX_TIMESTAMP()"),
    ("temporal", "UNIX_TIMESTAMP(string1[, string2])",
     "SELECT UNIX_TIMESTAMP(s) AS x FROM t", "UNIX_TIMESTAMP("),
    ("temporal", "TO_DATE(string1[, string2])", "SELECT TO_DATE(s) AS x FROM t", "TO_DATE("),
    ("temporal", "TO_TIMESTAMP_LTZ(numeric, precision)",
     "SELECT TO_TIMESTAMP_LTZ(n, 3) AS x FROM t", "TO_TIMESTAMP_LTZ("),
    ("temporal", "TO_TIMESTAMP(string1[, string2])", "SELECT TO_TIMESTAMP(s) AS x FROM t",
     "TO_TIMESTAMP("),
    ("temporal", "CURRENT_WATERMARK(rowtime)", "SELECT CURRENT_WATERMARK(ts) AS x FROM t",
     "CURRENT_WATERMARK("),
    ("conditional", "CASE value WHEN value1 THEN result1 ... END",
     "SELECT CASE n WHEN 1 THEN 'a' ELSE 'b' END AS x FROM t", "CASE "),
    ("conditional", "CASE WHEN condition1 THEN result1 ... END",
     "SELECT CASE WHEN n > 1 THEN 'a' END AS x FROM t", "CASE WHEN"),
    ("conditional", "NULLIF(value1, value2)", "SELECT NULLIF(n, 1) AS x FROM t", "NULLIF("),
    ("conditional", "COALESCE(value1, ...)", "SELECT COALESCE(n, 1) AS x FROM t", "COALESCE("),
    ("conditional", "IF(condition, true_value, false_value)",
     "SELECT IF(b, 1, 2) AS x FROM t", "IF("),
    ("conditional", "IFNULL(input, null_replacement)", "SELECT IFNULL(n, 1) AS x FROM t",
     "IFNULL("),
    ("conditional", "GREATEST(value1, ...)", "SELECT GREATEST(n, n2) AS x FROM t",
     "GREATEST("),
    ("conditional", "LEAST(value1, ...)", "SELECT LEAST(n, n2) AS x FROM t", "LEAST("),
    ("conversion", "CAST(value AS type)", "SELECT CAST(n AS STRING) AS x FROM t", "CAST("),
    ("conversion", "TRY_CAST(value AS type)", "SELECT TRY_CAST(s AS INT) AS x FROM t",
     "TRY_CAST("),
    ("conversion", "TYPEOF(input)", "SELECT TYPEOF(n) AS x FROM t", "TYPEOF("),
    ("collection", "CARDINALITY(array | map)", "SELECT CARDINALITY(ARRAY[n]) AS x FROM t",
     "CARDINALITY("),
    ("collection", "array '[' INT ']'", "SELECT ARRAY[n, n2][1] AS x FROM t", "]["),
    ("collection", "map '[' value ']'", "SELECT MAP['a', n]['a'] AS x FROM t", "]['"),
    *[("collection", f"{f}(..)", f"SELECT {f}({a}) AS x FROM t", f"{f}(")
      for f, a in (("ELEMENT", "ARRAY[n]"), ("ARRAY_CONTAINS", "ARRAY[n], 1"),
                   ("ARRAY_DISTINCT", "ARRAY[n]"), ("ARRAY_POSITION", "ARRAY[n], 1"),
                   ("ARRAY_REMOVE", "ARRAY[n], 1"), ("ARRAY_REVERSE", "ARRAY[n]"),
                   ("MAP_KEYS", "MAP['a', n]"), ("MAP_VALUES", "MAP['a', n]"),
                   ("MAP_FROM_ARRAYS", "ARRAY['a'], ARRAY[n]"), ("ARRAY_APPEND", "ARRAY[n], 1"),
                   ("ARRAY_PREPEND", "ARRAY[n], 1"), ("ARRAY_CONCAT", "ARRAY[n], ARRAY[1]"),
                   ("ARRAY_SLICE", "ARRAY[n, n2], 1, 1"), ("ARRAY_SORT", "ARRAY[n, n2]"),
                   ("ARRAY_UNION", "ARRAY[n], ARRAY[n2]"), ("ARRAY_EXCEPT", "ARRAY[n], ARRAY[n2]"),
                   ("ARRAY_INTERSECT", "ARRAY[n], ARRAY[n2]"), ("ARRAY_MAX", "ARRAY[n, n2]"),
                   ("ARRAY_MIN", "ARRAY[n, n2]"), ("ARRAY_JOIN", "ARRAY[s, s2], ','"),
                   ("MAP_ENTRIES", "MAP['a', n]"), ("MAP_UNION", "MAP['a', n], MAP['b', n2]"))],
    ("json", "string IS JSON", "SELECT s IS JSON AS x FROM t", "IS JSON"),
    *[("json", f"{f}(..)", f"SELECT {f}({a}) AS x FROM t", f"{f}(")
      for f, a in (("JSON_EXISTS", "s, '$.a'"), ("JSON_STRING", "n"), ("JSON_VALUE", "s, '$.a'"),
                   ("JSON_QUERY", "s, '$.a'"), ("JSON_OBJECT", "KEY 'a' VALUE n"),
                   ("JSON_ARRAY", "n"))],
    ("json", "JSON_OBJECTAGG(KEY key VALUE value)",
     "SELECT JSON_OBJECTAGG(KEY s VALUE n) AS x FROM t", "JSON_OBJECTAGG("),
    ("json", "JSON_ARRAYAGG(items)", "SELECT JSON_ARRAYAGG(n) AS x FROM t", "JSON_ARRAYAGG("),
    ("valueconstruction", "ROW(value1, ...)", "SELECT ROW(n, s) AS x FROM t", "ROW("),
    ("valueconstruction", "ARRAY '[' value1, ... ']'", "SELECT ARRAY[n, n2] AS x FROM t",
     "ARRAY["),
    ("valueconstruction", "MAP '[' key1, value1, ... ']'", "SELECT MAP['a', n] AS x FROM t",
     "MAP["),
    ("grouping", "GROUP_ID()", "SELECT s, GROUP_ID() AS x FROM t GROUP BY s", "GROUP_ID("),
    ("grouping", "GROUPING(expression1, ...)",
     "SELECT s, GROUPING(s) AS x FROM t GROUP BY ROLLUP(s)", "GROUPING("),
    ("aggregate", "COUNT(*)", "SELECT COUNT(*) AS x FROM t", "COUNT(*)"),
    ("aggregate", "COUNT([ALL] expression | DISTINCT expression1, ...)",
     "SELECT COUNT(DISTINCT s) AS x FROM t", "COUNT(DISTINCT"),
    *[("aggregate", f"{f}([ALL | DISTINCT] expression)", f"SELECT {f}(n) AS x FROM t", f"{f}(")
      for f in ("AVG", "SUM", "MAX", "MIN", "STDDEV_POP", "STDDEV_SAMP", "VAR_POP", "VAR_SAMP",
                "COLLECT", "VARIANCE", "FIRST_VALUE", "LAST_VALUE")],
    ("aggregate", "LISTAGG(expression [, separator])", "SELECT LISTAGG(s) AS x FROM t",
     "LISTAGG("),
    *[("aggregate", f"{f}() OVER (..) (TopN)",
       f"SELECT * FROM (SELECT s, {f}() OVER (PARTITION BY s ORDER BY ts) AS x FROM t) "
       "WHERE x <= 2", f"{f}(")
      for f in ("RANK", "DENSE_RANK", "ROW_NUMBER")],
    *[("aggregate", f"{f}() OVER (..)",
       f"SELECT {f}() OVER (PARTITION BY s ORDER BY ts) AS x FROM t", f"{f}(")
      for f in ("CUME_DIST", "PERCENT_RANK")],
    *[("aggregate", f"{f}(expression [, offset] [, default]) OVER (..)",
       f"SELECT {f}(n) OVER (PARTITION BY s ORDER BY ts) AS x FROM t", f"{f}(")
      for f in ("LEAD", "LAG")],
    ("aggregate", "NTILE(n) OVER (..)",
     "SELECT NTILE(2) OVER (PARTITION BY s ORDER BY ts) AS x FROM t", "NTILE("),
    ("catalog", "CURRENT_DATABASE()", "SELECT CURRENT_DATABASE() AS x FROM t",
     "CURRENT_DATABASE("),
]


def status(spark, query: str) -> tuple[bool, str]:
    """(planned?, twinflow's reason when refused)."""
    from operators_lib.errors import TwinflowError
    from operators_lib.sql.script import script_of
    from operators_lib.state.queries import plan_query

    try:
        plan_query(script_of([("ddl.sql", DDL), ("query.sql", query)]), spark, 1)
    except TwinflowError as e:
        return False, re.sub(r" \(query\.sql, line \d+\)", "", str(e)).splitlines()[0]
    return True, ""


def case_of(word: str, texts: dict[str, str]) -> str | None:
    """The first corpus case whose query uses ``word`` (functions/ first), not as the end of a
    longer name (REVERSE( is not ARRAY_REVERSE()."""
    boundary = r"(?<![A-Za-z0-9_])" if word[0].isalnum() else ""
    pattern = re.compile(boundary + re.escape(word), re.IGNORECASE)
    for name, text in texts.items():
        if pattern.search(text):
            return name
    return None


def table(spark) -> str:
    queries = sorted(CASES.glob("*/*/query.sql"), key=lambda p: (p.parent.parent.name !=
                                                                 "functions", str(p)))
    texts = {f"{p.parent.parent.name}/{p.parent.name}": "\n".join(
        line for line in p.read_text().splitlines() if not line.lstrip().startswith("--"))
        for p in queries}
    lines = ["# Flink's built-in functions in twinflow", "",
             "Generated by `tests/oracle/function_catalog.py` from the SQL forms of Flink 2.3's",
             "built-in functions page (`docs/data/sql_functions.yml` in apache/flink); each",
             "planned by twinflow in a sample query. *Supported* entries name the oracle case",
             "(`tests/cases/`) that checks them against Flink; *refused* ones give twinflow's",
             "message (exit 2, with the file and line).", "",
             "| family | Flink SQL | twinflow | case or reason |", "|---|---|---|---|"]
    counts = {True: 0, False: 0}
    for family, form, query, word in ENTRIES:
        ok, reason = status(spark, query)
        counts[ok] += 1
        cell = f"`{case_of(word, texts)}`" if ok else reason.replace("|", "\\|")
        lines.append(f"| {family} | `{form.replace('|', chr(92) + '|')}` | "
                     f"{'supported' if ok else 'refused'} | {cell} |")
    lines += ["", f"{counts[True]} supported, {counts[False]} refused, of {len(ENTRIES)}.", ""]
    return "\n".join(lines)


def main() -> None:
    from operators_lib.engine.spark import get_spark

    DOC.write_text(table(get_spark()))
    print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
