"""Pattern matching with Java regular expressions (the engine of both Flink and Spark):
REGEXP, REGEXP_EXTRACT, REGEXP_REPLACE, and SIMILAR TO (Flink's translation of the SQL pattern
to a Java regex, reproduced here for a literal pattern)."""

from __future__ import annotations

from operators_lib.sql.functions.base import Call, Function, _string
from operators_lib.sql.functions.strings import _spark_string
from operators_lib.sql.regex import RegexTooComplex, group_always_participates


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




def _regexp(c: Call) -> str:
    """REGEXP(s, pattern): does the Java pattern match a part of s (both engines' find); an
    invalid pattern is NULL in Flink."""
    c.require(0, _string, "a string")
    pattern = _regex(c, 1)
    if pattern is None:
        return "CAST(NULL AS BOOLEAN)"
    return f"({c.sql[0]} RLIKE {_spark_string(pattern)})"


# SIMILAR TO: Flink's SqlLikeUtils.sqlToRegexSimilar (copied from Calcite), without ESCAPE.
_JAVA_SPECIALS = "[]()|^-+*?{}$\\."
_SIMILAR_SPECIALS = "[]()|^-+*_%?{}"
_CHAR_CLASSES = {"[:ALPHA:]": "\\p{Alpha}", "[:alpha:]": "\\p{Alpha}",
                 "[:UPPER:]": "\\p{Upper}", "[:upper:]": "\\p{Upper}",
                 "[:LOWER:]": "\\p{Lower}", "[:lower:]": "\\p{Lower}",
                 "[:DIGIT:]": "\\d", "[:digit:]": "\\d", "[:SPACE:]": " ", "[:space:]": " ",
                 "[:WHITESPACE:]": "\\s", "[:whitespace:]": "\\s",
                 "[:ALNUM:]": "\\p{Alnum}", "[:alnum:]": "\\p{Alnum}"}


class InvalidSimilarPattern(ValueError):
    pass


def similar_to_regex(pattern: str) -> str:
    """The Java regex Flink matches (``Pattern.matches``, the whole string) for a SIMILAR TO
    pattern: ``_`` is ``.``, ``%`` is ``(?s:.*)``, ``$`` and ``\\`` are literal, a bracket
    expression may hold ``[:DIGIT:]``-style classes; everything else (``.`` included) keeps its
    regex meaning. Raises InvalidSimilarPattern where Flink's translation fails."""
    out: list[str] = []
    i, inside = 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "_":
            out.append(".")
        elif ch == "%":
            out.append("(?s:.*)")
        elif ch == "[":
            out.append("[")
            inside = True
            i = _enumeration(pattern, out, i)
        elif ch == "]":
            if not inside:
                raise InvalidSimilarPattern(pattern)
            inside = False
            out.append("]")
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "$":
            out.append("\\$")
        else:
            out.append(ch)
        i += 1
    if inside:
        raise InvalidSimilarPattern(pattern)
    return "".join(out)


def _enumeration(pattern: str, out: list[str], pos: int) -> int:
    """The characters of a bracket expression after ``pattern[pos]`` ('['), up to (not
    including) its ']'; returns the index before that ']' (sqlSimilarRewriteCharEnumeration)."""
    i = pos + 1
    while i < len(pattern):
        ch = pattern[i]
        if ch == "]":
            return i - 1
        if ch in "-^":
            out.append(ch)
        elif pattern.startswith("[:", i):
            name = next((k for k in _CHAR_CLASSES if pattern.startswith(k, i)), None)
            if name is None:
                raise InvalidSimilarPattern(pattern)
            out.append(_CHAR_CLASSES[name])
            i += len(name) - 1
        elif ch in _SIMILAR_SPECIALS:
            raise InvalidSimilarPattern(pattern)
        else:
            out.append(ch)
        i += 1
    return i - 1


def _similar_to(c: Call) -> str:
    """``s SIMILAR TO 'pattern'``: the whole string matches Flink's translation of the pattern
    (a literal); NULL when s is NULL."""
    c.require(0, _string, "a string")
    text = c.string(1, "pattern")
    if "\0" in text:  # Flink reads NUL as its (absent) escape character
        raise c.reject("SIMILAR TO with a NUL character in the pattern is not supported")
    try:
        regex = similar_to_regex(text)
    except InvalidSimilarPattern:
        raise c.reject(f"SIMILAR TO pattern {text!r} is invalid (Flink's job fails on "
                       "it)") from None
    if c.env.regex_groups(regex) is None:
        raise c.reject(f"SIMILAR TO pattern {text!r} is not a valid regular expression "
                       "(Flink's job fails on it)")
    whole = "\\A(?:" + regex + ")\\z"
    return f"({c.sql[0]} RLIKE {_spark_string(whole)})"


FUNCTIONS = [
    Function("REGEXP", 2, 2, _regexp),
    Function("REGEXP_EXTRACT", 2, 3, _regexp_extract),
    Function("REGEXP_REPLACE", 3, 3, _regexp_replace),
    Function("SIMILAR TO", 2, 2, _similar_to),
]
