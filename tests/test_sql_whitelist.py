"""The SQL whitelist without Spark: what parsing refuses (construct and line), how Flink's string
literals read, the FILTER rewrite, the regex structure REGEXP_EXTRACT relies on, SIMILAR TO's
translation and BETWEEN SYMMETRIC."""

from __future__ import annotations

import pytest
from sqlglot import exp

from operators_lib.errors import SqlError
from operators_lib.sql import load_script
from operators_lib.sql.functions.patterns import InvalidSimilarPattern, similar_to_regex
from operators_lib.sql.regex import group_always_participates

DDL = """CREATE TABLE t (
  k STRING,
  v INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
);
CREATE TABLE r (k STRING, rate INT, PRIMARY KEY (k) NOT ENFORCED);
"""


def _load(tmp_path, query: str):
    (tmp_path / "ddl.sql").write_text(DDL)
    (tmp_path / "q.sql").write_text(query)
    return load_script([tmp_path / "ddl.sql", tmp_path / "q.sql"])


@pytest.mark.parametrize("query, needles", [
    ("SELECT k,\n reflect('java.lang.System', 'getenv', 'X') FROM t",
     ["unknown or unsupported function REFLECT", "line 2"]),
    ("SELECT k, my_udf(v) FROM t", ["unknown or unsupported function MY_UDF", "line 1"]),
    ("SELECT k,\n\n array_size(ARRAY[1]) FROM t", ["function ARRAY_SIZE", "line 3"]),
    ("SELECT k, date_trunc('HOUR', ts) FROM t", ["function DATE_TRUNC"]),
    ("SELECT k, COLLECT(v) FROM t GROUP BY k", ["COLLECT is not supported", "MULTISET"]),
    ("SELECT k FROM t WHERE\n (k, v) = ('a', 1)", ["a row value (a, b)", "line 2"]),
    ("SELECT * FROM t\nMATCH_RECOGNIZE (PARTITION BY k ORDER BY ts MEASURES A.v AS av "
     "PATTERN (A) DEFINE A AS v > 1)", ["MATCH_RECOGNIZE", "line 2"]),
    ("SELECT UPPER(x => k) FROM t", ["named arguments (=>) are only supported in window TVFs"]),
    ("SELECT k, x FROM t,\n LATERAL TABLE(split_udtf(k)) AS T(x)",
     ["LATERAL TABLE", "line 2"]),
    ("SELECT k, x FROM t CROSS JOIN UNNEST(k) AS T(x)", ["UNNEST is not supported"]),
    ("SELECT /*+ STATE_TTL('t' = '1d') */ k FROM t", ["hints", "line 1"]),
    ("SELECT k FROM t TABLESAMPLE (10 PERCENT)", ["TABLESAMPLE"]),
    ("SELECT k FROM db.t", ["qualified table names"]),
    ("SELECT k, CURRENT_TIMESTAMP FROM t", ["CURRENT_TIMESTAMP"]),
    ("SELECT k,\n COUNT(*) FILTER (WHERE v > 1) OVER (PARTITION BY k ORDER BY ts) AS c FROM t",
     ["FILTER (WHERE ..) with OVER", "line 2"]),
    ('SELECT k,\n "x" FROM t', ["double quotes are not Flink SQL", "line 2"]),
    ("SELECT k, v::BIGINT FROM t", ["'::' casts"]),
    ("SELECT k FROM t WHERE v != 1", ["'!=' is not Flink SQL"]),
    ("SELECT k, SUBSTRING(k) FROM t", ["SUBSTRING takes 2 to 3 arguments, got 1"]),
    ("SELECT k, k RLIKE 'a' FROM t", ["RLIKE"]),
    ("SELECT k, ts + INTERVAL '1' MONTH FROM t", ["only SECOND, MINUTE, HOUR and DAY"]),
])
def test_refused_when_parsed_with_construct_and_line(tmp_path, query, needles):
    with pytest.raises(SqlError) as e:
        _load(tmp_path, query)
    for n in needles:
        assert n in str(e.value), str(e.value)


def test_string_literals_read_as_flink_does(tmp_path):
    """No backslash escapes ('x(\\d+)' keeps its backslash), '' is a quote."""
    script = _load(tmp_path, "SELECT REGEXP_EXTRACT(k, 'x(\\d+)', 1) AS a, 'it''s' AS b FROM t")
    literals = [n.name for n in script.query.find_all(exp.Literal) if n.is_string]
    assert sorted(literals) == ["it's", "x(\\d+)"]


def test_filter_becomes_case_inside_the_aggregate(tmp_path):
    script = _load(tmp_path, "SELECT k, COUNT(*) FILTER (WHERE v > 1) AS c, "
                             "COUNT(DISTINCT v) FILTER (WHERE v < 9) AS d FROM t GROUP BY k")
    assert [e.sql() for e in script.query.expressions[1:]] == [
        "COUNT(CASE WHEN v > 1 THEN 1 END) AS c",
        "COUNT(DISTINCT CASE WHEN v < 9 THEN v END) AS d"]


@pytest.mark.parametrize("pattern, group, always", [
    ("x(\\d+)y", 1, True), ("x(\\d+)(w)?", 2, False), ("(&|^)channel_id=([^&]*)", 2, True),
    ("(&|^)channel_id=([^&]*)", 1, True), ("a|(b)", 1, False), ("((a)|b)", 2, False),
    ("(a(b))*", 2, False), ("[(](x)", 1, True), ("\\((x)", 1, True), ("(a){0,3}", 1, False),
    ("(a){1,3}", 1, True), ("(?<n>a)(b)?", 1, True), ("(?:(a)|b)c", 1, False),
])
def test_regex_group_participation(pattern, group, always):
    assert group_always_participates(pattern, group) is always


@pytest.mark.parametrize("pattern, regex", [
    ("h%", "h(?s:.*)"), ("(a|b)_+", "(a|b).+"), ("%.%", "(?s:.*).(?s:.*)"),
    ("[[:DIGIT:]a-c]+", "[\\da-c]+"), ("a$b\\c", "a\\$b\\\\c"), ("[^x]{2}", "[^x]{2}"),
])
def test_similar_to_translates_as_flink(pattern, regex):
    """Flink's SqlLikeUtils.sqlToRegexSimilar: '_' and '%' become regex, '$' and '\\' literal,
    '.' keeps its regex meaning (measured: 'axb' SIMILAR TO 'a.b' is TRUE)."""
    assert similar_to_regex(pattern) == regex


@pytest.mark.parametrize("pattern", ["a]", "[ab", "[a_]", "[[:WORD:]]"])
def test_similar_to_refuses_what_flink_cannot_translate(pattern):
    with pytest.raises(InvalidSimilarPattern):
        similar_to_regex(pattern)


def test_between_symmetric_is_both_orders(tmp_path):
    """As Calcite expands it: NULL bounds give what the OR of both orders gives."""
    script = _load(tmp_path, "SELECT k FROM t WHERE v NOT BETWEEN SYMMETRIC 5 AND 1 "
                             "AND v BETWEEN ASYMMETRIC 1 AND 2")
    assert script.query.args["where"].this.sql() == (
        "NOT (v BETWEEN 5 AND 1 OR v BETWEEN 1 AND 5) AND v BETWEEN 1 AND 2")
