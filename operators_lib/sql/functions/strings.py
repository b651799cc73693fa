"""String functions (positions and lengths count code points in both engines)."""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from operators_lib.sql.functions.base import (
    Call,
    Function,
    _integral,
    _string,
    _strings,
    value_refused,
)


def _spark_string(value: str) -> str:
    return exp.Literal.string(value).sql(dialect="spark")


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


def _pad(side: str) -> Callable[[Call], str]:
    """LPAD / RPAD: a negative length is NULL in Flink (Spark: ''); an empty pad leaves the
    string as it is, cut to the length (both)."""
    def render(c: Call) -> str:
        for i, ok in ((0, _string), (1, _integral), (2, _string)):
            c.require(i, ok, "a string" if i != 1 else "an integer")
        s, n, pad = c.sql
        return f"(CASE WHEN {n} < 0 THEN NULL ELSE {side}({s}, {n}, {pad}) END)"
    return render


def _locate(c: Call) -> str:
    """LOCATE(needle, haystack [, start]): the 1-based position of the first match at or after
    ``start``, 0 when there is none (both engines)."""
    c.require(0, _string, "a string")
    c.require(1, _string, "a string")
    if len(c.sql) == 3:
        c.require(2, _integral, "an integer")
        return f"locate({c.sql[0]}, {c.sql[1]}, {c.sql[2]})"
    return f"locate({c.sql[0]}, {c.sql[1]})"


def _initcap(c: Call) -> str:
    """Flink changes ASCII letters only: one that follows anything but an ASCII letter or
    digit (a space, '-', '_', any non-ASCII character) is upper-cased, the others lower-cased;
    Spark's initcap starts words at spaces only and changes every letter."""
    c.require(0, _string, "a string")
    chars = f"split({c.sql[0]}, '')"
    return (f"(CASE WHEN {c.sql[0]} IS NULL THEN NULL ELSE array_join(transform({chars}, "
            f"(ch, i) -> CASE WHEN NOT (ch RLIKE '^[A-Za-z]$') THEN ch WHEN i = 0 OR NOT "
            f"({chars}[i - 1] RLIKE '^[A-Za-z0-9]$') THEN upper(ch) ELSE lower(ch) END), '') "
            f"END)")


def _ascii(c: Call) -> str:
    """Flink's ASCII is the first byte of the UTF-8 text as a signed byte ('Ä' is -61); 0 for
    ''."""
    c.require(0, _string, "a string")
    byte = f"ascii(CAST(substr(encode({c.sql[0]}, 'UTF-8'), 1, 1) AS STRING))"
    first = f"CAST(conv(hex(substr(encode({c.sql[0]}, 'UTF-8'), 1, 1)), 16, 10) AS INT)"
    return (f"(CASE WHEN {c.sql[0]} IS NULL THEN NULL WHEN {c.sql[0]} = '' THEN 0 "
            f"WHEN {first} > 127 THEN {first} - 256 ELSE {byte} END)")


def _chr(c: Call) -> str:
    """CHR(n): the character of code n modulo 256 (as Spark's chr); negative n is ''."""
    c.require(0, _integral, "an integer")
    return f"chr({c.sql[0]})"


def _from_base64(c: Call) -> str:
    c.require(0, _string, "a string")
    return f"CAST(unbase64({c.sql[0]}) AS STRING)"


def _overlay(c: Call) -> str:
    """OVERLAY(s PLACING x FROM n [FOR m]): m defaults to x's length (both engines); from
    past the end of s, Flink leaves s as it is (Spark appends x)."""
    c.require(0, _string, "a string")
    c.require(1, _string, "a string")
    for i in range(2, len(c.sql)):
        c.require(i, _integral, "an integer")
    s, x, start = c.sql[:3]
    length = f" FOR {c.sql[3]}" if len(c.sql) == 4 else ""
    # FOR m <= 0: Flink keeps s up to n and x, and drops the rest (Spark inserts x); measured
    # (found by the SQL fuzzer)
    cut = (f"WHEN {c.sql[3]} <= 0 THEN concat(substring({s}, 1, {start} - 1), {x}) "
           if length else "")
    return (f"(CASE WHEN {start} > char_length({s}) AND {x} IS NOT NULL THEN {s} {cut}"
            f"ELSE overlay({s} PLACING {x} FROM {start}{length}) END)")


def _with_length(template: str) -> Callable[[Call], str]:
    """A (string, integer) function whose negative length gives '' in both engines."""
    def render(c: Call) -> str:
        c.require(0, _string, "a string")
        c.require(1, _integral, "an integer")
        return template.format(*c.sql)
    return render


def _bmp_class(java_class: str) -> str:
    """A regex class of one UTF-16 unit: Flink's IS_* test each Java char (a character outside
    the Basic Multilingual Plane is two surrogates, neither a letter nor a digit)."""
    return f"[{java_class}&&[\\x{{0}}-\\x{{FFFF}}]]"


def _is_chars(java_class: str) -> Callable[[Call], str]:
    """IS_ALPHA / IS_DIGIT: every char is a letter (Character.isLetter) / a digit
    (Character.isDigit, any script); FALSE for '' and for NULL."""
    def render(c: Call) -> str:
        c.require(0, _string, "a string")
        regex = _spark_string(f"^{_bmp_class(java_class)}+$")
        return f"coalesce({c.sql[0]} RLIKE {regex}, false)"
    return render


# Java's Double.parseDouble grammar (its Double.valueOf documentation), blanks being any char up
# to U+0020: NaN, Infinity, decimal and hexadecimal floating text, an f/F/d/D suffix.
_DOUBLE_TEXT = (r"^[\x00-\x20]*[+-]?(NaN|Infinity|((([0-9]+\.?[0-9]*([eE][+-]?[0-9]+)?)|"
                r"(\.[0-9]+([eE][+-]?[0-9]+)?)|((0[xX][0-9a-fA-F]+\.?|0[xX][0-9a-fA-F]*\."
                r"[0-9a-fA-F]+)[pP][+-]?[0-9]+))[fFdD]?))[\x00-\x20]*$")


def _is_decimal(c: Call) -> str:
    """IS_DECIMAL(s): Integer.parseInt, Long.parseLong or Double.parseDouble reads s (digits of
    any script for the first two, blanks, NaN, Infinity, hex and a d/f suffix for the last);
    FALSE for '' and NULL. Digits beyond ASCII in more than 18 characters may overflow a long:
    refused by value."""
    c.require(0, _string, "a string")
    s = c.sql[0]
    digits = _spark_string("^[+-]?" + _bmp_class("\\p{Nd}") + "+$")
    whole = f"({s} RLIKE {digits})"
    refused = value_refused(f"concat('IS_DECIMAL of \"', {s}, '\" (digits beyond ASCII that "
                            "may overflow a long)')", "boolean")
    return (f"(CASE WHEN {s} IS NULL THEN false WHEN {s} RLIKE {_spark_string(_DOUBLE_TEXT)} "
            f"THEN true WHEN {whole} AND char_length({s}) <= 18 THEN true WHEN {whole} THEN "
            f"{refused} ELSE false END)")


def _instr(c: Call) -> str:
    """INSTR(s, sub): the 1-based position (in code points) of sub's first occurrence, 0 when
    there is none, 1 for ''; NULL when either is NULL (as Spark's instr)."""
    for i in (0, 1):
        c.require(i, _string, "a string")
    return f"instr({c.sql[0]}, {c.sql[1]})"


def _translate(c: Call) -> str:
    """TRANSLATE(s, from, to): each code point of s found in ``from`` becomes the one at its
    place in ``to`` (the first place when it repeats), or is removed when ``to`` is shorter
    (as Spark's translate). NULL when s is; a NULL ``from`` or ``to`` counts as '' in Flink
    (Spark: NULL)."""
    for i in range(3):
        c.require(i, _string, "a string")
    s, old, new = c.sql
    return f"translate({s}, coalesce({old}, ''), coalesce({new}, ''))"


def _elt(c: Call) -> str:
    """ELT(n, e1, e2, ..): the n-th expression, NULL when n is NULL or outside 1..count (Spark's
    elt fails there). Flink takes the expressions only when all have one type: twinflow
    takes columns (or expressions over them) of one type, or string literals of one
    length (a literal's type is CHAR(length) in Flink)."""
    c.require(0, lambda t: t.is_integral, "an integer")
    values = c.args[1:]
    literals = [a for a in values if isinstance(a, exp.Literal)]
    if literals and (len(literals) < len(values) or not all(a.is_string for a in literals)
                     or len({len(a.name) for a in literals}) > 1):
        raise c.reject("ELT of literals is supported when all are strings of one length "
                       "(Flink types each as CHAR(length), and takes one type only)")
    if any(isinstance(a, exp.Null) for a in values):
        raise c.reject("ELT of a NULL literal is not supported (Flink takes one type only)")
    types = {c.type(i) for i in range(1, len(c.args))}
    if len(types) > 1 and not literals:
        shown = ", ".join(sorted(t.sql() for t in types))
        raise c.reject(f"ELT of different types ({shown}): Flink takes one type only")
    n = c.sql[0]
    whens = " ".join(f"WHEN {i} THEN {x}" for i, x in enumerate(c.sql[1:], start=1))
    return f"(CASE {n} {whens} END)"


# strings (positions and lengths count code points in both engines)
FUNCTIONS = [
    Function("LPAD", 3, 3, _pad("lpad")),
    Function("RPAD", 3, 3, _pad("rpad")),
    Function("REPLACE", 3, 3, _strings("replace({})")),
    Function("POSITION", 2, 2, _strings("locate({})")),
    Function("LOCATE", 2, 3, _locate),
    Function("INITCAP", 1, 1, _initcap),
    Function("REVERSE", 1, 1, _strings("reverse({})")),
    Function("LEFT", 2, 2, _with_length("left({0}, {1})")),
    Function("RIGHT", 2, 2, _with_length("right({0}, {1})")),
    Function("REPEAT", 2, 2, _with_length("repeat({0}, {1})")),
    Function("LTRIM", 1, 1, _strings("ltrim({})")),
    Function("RTRIM", 1, 1, _strings("rtrim({})")),
    Function("OVERLAY", 3, 4, _overlay),
    Function("ASCII", 1, 1, _ascii),
    Function("CHR", 1, 1, _chr),
    Function("TO_BASE64", 1, 1, _strings("base64(encode({}, 'UTF-8'))")),
    Function("FROM_BASE64", 1, 1, _from_base64),
    Function("MD5", 1, 1, _strings("md5(encode({}, 'UTF-8'))")),
    Function("SHA1", 1, 1, _strings("sha1(encode({}, 'UTF-8'))")),
    Function("SHA256", 1, 1, _strings("sha2(encode({}, 'UTF-8'), 256)")),
    Function("CONCAT", 1, None, _strings("concat({})")),
    Function("CONCAT_WS", 2, None, _concat_ws),
    Function("SUBSTRING", 2, 3, _substring),
    Function("UPPER", 1, 1, _strings("upper({})")),
    Function("LOWER", 1, 1, _strings("lower({})")),
    Function("TRIM", 1, 2, _trim),
    Function("CHAR_LENGTH", 1, 1, _strings("char_length({})")),
    Function("CHARACTER_LENGTH", 1, 1, _strings("char_length({})")),
    Function("SPLIT_INDEX", 3, 3, _split_index),
    Function("HASH_CODE", 1, 1, _hash_code),
    Function("IS_ALPHA", 1, 1, _is_chars("\\p{L}")),
    Function("IS_DIGIT", 1, 1, _is_chars("\\p{Nd}")),
    Function("IS_DECIMAL", 1, 1, _is_decimal),
    Function("INSTR", 2, 2, _instr),
    Function("TRANSLATE", 3, 3, _translate),
    Function("ELT", 2, None, _elt),
]
