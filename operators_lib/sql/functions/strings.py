"""String functions (positions and lengths count code points in both engines)."""

from __future__ import annotations

from sqlglot import exp

from operators_lib.sql.functions.base import (
    Call,
    Function,
    _string,
    _strings,
)
from operators_lib.sql.regex import RegexTooComplex, group_always_participates


def _spark_string(value: str) -> str:
    return exp.Literal.string(value).sql(dialect="spark")


def _regex(c: Call, i: int) -> str | None:
    """The pattern of argument ``i`` (a string literal); None if Java rejects it (Flink then
    returns NULL)."""
    pattern = c.string(i, "pattern")
    return pattern if c.env.regex_groups(pattern) is not None else None


def _regexp_extract(c: Call) -> str:
    """Flink: NULL when nothing matches, when the group takes no part in the match, when the
    index exceeds the groups or the pattern is invalid (Spark: '' or an error); the index
    defaults to 0 (Spark: 1)."""
    c.require(0, _string, "a string")
    pattern = _regex(c, 1)
    index = 0 if len(c.args) == 2 else c.int_literal(2)
    if index is None:
        raise c.reject("REGEXP_EXTRACT needs an integer literal as its group index")
    if pattern is None or index < 0 or index > c.env.regex_groups(pattern):
        return "CAST(NULL AS STRING)"
    try:
        always = group_always_participates(pattern, index)
    except RegexTooComplex:
        always = False
    if not always:
        raise c.reject(f"REGEXP_EXTRACT of group {index}, which may take no part in a match "
                       "(Flink returns NULL there, Spark ''): not supported")
    p = _spark_string(pattern)
    return f"(CASE WHEN {c.sql[0]} RLIKE {p} THEN regexp_extract({c.sql[0]}, {p}, {index}) END)"


def _regexp_replace(c: Call) -> str:
    """Flink's replacement is literal text ('$1' and '\\' are not special, Spark's are); an
    invalid pattern gives NULL."""
    for i in (0, 2):
        c.require(i, _string, "a string")
    pattern = _regex(c, 1)
    if pattern is None:
        return "CAST(NULL AS STRING)"
    literal = f"replace(replace({c.sql[2]}, '\\\\', '\\\\\\\\'), '$', '\\\\$')"
    return f"regexp_replace({c.sql[0]}, {_spark_string(pattern)}, {literal})"


def _split_index(c: Call) -> str:
    """Flink splits on the whole separator (not a regex), keeps empty parts, gives NULL for an
    empty string and for an index outside the parts (Spark's element_at fails)."""
    c.require(0, _string, "a string")
    sep = c.string(1, "separator")
    if sep == "":
        raise c.reject("SPLIT_INDEX with an empty separator (Flink splits on whitespace "
                       "then) is not supported")
    c.require(2, lambda t: t.is_integral, "an integer")
    quoted = "".join(ch if ch.isalnum() else "\\" + ch for ch in sep)
    s, idx = c.sql[0], c.sql[2]
    return (f"(CASE WHEN {s} <> '' AND {idx} >= 0 THEN try_element_at(split({s}, "
            f"{_spark_string(quoted)}, -1), {idx} + 1) END)")


def _substring(c: Call) -> str:
    """Positions from 1; 0 counts as 1 for the start and a negative start counts from the end,
    the same in both engines."""
    c.require(0, _string, "a string")
    for i in range(1, len(c.args)):
        c.require(i, lambda t: t.is_integral, "an integer")
    return f"substring({', '.join(c.sql)})"


def _trim(c: Call) -> str:
    """TRIM([BOTH | LEADING | TRAILING] [chars] FROM s): removes any of the characters (default
    ' ', not other blanks) in both engines."""
    for i in range(len(c.args)):
        c.require(i, _string, "a string")
    position = (c.node.args.get("position") or "BOTH").upper()
    chars = f"{c.sql[1]} " if len(c.sql) > 1 else ""
    return f"trim({position} {chars}FROM {c.sql[0]})"


def _concat_ws(c: Call) -> str:
    for i in range(len(c.args)):
        c.require(i, _string, "a string")
    return f"concat_ws({', '.join(c.sql)})"


# Flink's HASH_CODE(string) is Math.abs of Java's String.hashCode (s[0]*31^(n-1) + .. + s[n-1]
# over the UTF-16 code units, 32-bit; abs(-2^31) stays -2^31). Spark has no such function: fold
# over the UTF-16BE bytes two at a time modulo 2^32, read it as a signed INT, take abs.
_HASH_CODE = (
    "CAST(IF({x} = '', 0, (abs((aggregate(sequence(1, octet_length(encode({x}, 'UTF-16BE')), "
    "2), 0L, (h, i) -> (h * 31 + CAST(conv(hex(substr(encode({x}, 'UTF-16BE'), i, 2)), 16, 10) "
    "AS BIGINT)) % 4294967296) + 2147483648) % 4294967296 - 2147483648) + 2147483648) "
    "% 4294967296 - 2147483648) AS INT)")


def _hash_code(c: Call) -> str:
    c.require(0, _string, "a string")
    return _HASH_CODE.format(x=f"({c.sql[0]})")


# strings (positions and lengths count code points in both engines)
FUNCTIONS = [
    Function("CONCAT", 1, None, _strings("concat({})")),
    Function("CONCAT_WS", 2, None, _concat_ws),
    Function("SUBSTRING", 2, 3, _substring),
    Function("UPPER", 1, 1, _strings("upper({})")),
    Function("LOWER", 1, 1, _strings("lower({})")),
    Function("TRIM", 1, 2, _trim),
    Function("CHAR_LENGTH", 1, 1, _strings("char_length({})")),
    Function("CHARACTER_LENGTH", 1, 1, _strings("char_length({})")),
    Function("REGEXP_EXTRACT", 2, 3, _regexp_extract),
    Function("REGEXP_REPLACE", 3, 3, _regexp_replace),
    Function("SPLIT_INDEX", 3, 3, _split_index),
    Function("HASH_CODE", 1, 1, _hash_code),
]
