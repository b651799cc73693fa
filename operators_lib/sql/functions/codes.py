"""Hashes and encodings of text: SHA224, SHA384, SHA512, SHA2, URL_ENCODE, URL_DECODE, and
DECODE(ENCODE(s, charset), charset) (twinflow has no BYTES values)."""

from __future__ import annotations

from operators_lib.sql.functions.base import Call, Function, _string, _strings, data_error

_SHA2_BITS = (224, 256, 384, 512)


def _sha2(c: Call) -> str:
    """SHA2(s, bits): the lower-case hex digest of s's UTF-8 bytes; NULL when s or bits is
    NULL. Another literal bits fails Flink's plan, another value its job (Spark: NULL, and
    0 is SHA-256)."""
    c.require(0, _string, "a string")
    c.require(1, lambda t: t.is_integral, "an integer")
    bits = c.int_literal(1)
    if bits is not None and bits not in _SHA2_BITS:
        raise c.reject(f"SHA2 with {bits} bits (Flink fails: unsupported algorithm; supported: "
                       "224, 256, 384, 512)")
    s, n = c.sql
    fail = data_error(f"concat('SHA2: unsupported algorithm SHA-', {n})", "string")
    return (f"(CASE WHEN {s} IS NULL OR {n} IS NULL THEN NULL WHEN {n} IN (224, 256, 384, "
            f"512) THEN sha2(encode({s}, 'UTF-8'), CAST({n} AS INT)) ELSE {fail} END)")


def _url_decode(c: Call) -> str:
    """java.net.URLDecoder in both engines ('+' is a space, an incomplete UTF-8 sequence is
    U+FFFD); an invalid escape ('%zz', a trailing '%') is NULL in Flink (Spark's url_decode
    fails there, try_url_decode is NULL)."""
    c.require(0, _string, "a string")
    return f"try_url_decode({c.sql[0]})"


# The charsets Flink's page names for ENCODE / DECODE, upper case.
_CHARSETS = ("US-ASCII", "ISO-8859-1", "UTF-8", "UTF-16BE", "UTF-16LE", "UTF-16")


def _charset(c: Call, i: int) -> str:
    name = c.string(i, "charset").upper()
    if name not in _CHARSETS:
        raise c.reject(f"{c.name} with the charset {name!r} is not supported (supported: "
                       f"{', '.join(_CHARSETS)})")
    return name


def _encode(c: Call) -> str:
    raise c.reject("ENCODE gives BYTES, which twinflow does not have; it is supported as "
                   "DECODE(ENCODE(s, charset), charset)")


def _decode(c: Call) -> str:
    """DECODE(ENCODE(s, cs), cs) (``function_call`` passes s, cs, cs): s as Java's
    String.getBytes and new String round-trip it: the UTF charsets give s back, US-ASCII and
    ISO-8859-1 replace each character they lack (a code point) by '?'. DECODE in another
    charset reads the bytes as other text: refused."""
    if len(c.args) == 2:
        raise c.reject("DECODE needs BYTES, which twinflow does not have; it is supported as "
                       "DECODE(ENCODE(s, charset), charset)")
    c.require(0, _string, "a string")
    charset, back = _charset(c, 1), _charset(c, 2)
    if charset != back:
        raise c.reject(f"DECODE(ENCODE(s, '{charset}'), '{back}') is not supported (only the "
                       "same charset both ways)")
    s = c.sql[0]
    if charset == "US-ASCII":
        return f"regexp_replace({s}, '[^\\\\x{{0}}-\\\\x{{7F}}]', '?')"
    if charset == "ISO-8859-1":
        return f"regexp_replace({s}, '[^\\\\x{{0}}-\\\\x{{FF}}]', '?')"
    return s


FUNCTIONS = [
    Function("SHA224", 1, 1, _strings("sha2(encode({}, 'UTF-8'), 224)")),
    Function("SHA384", 1, 1, _strings("sha2(encode({}, 'UTF-8'), 384)")),
    Function("SHA512", 1, 1, _strings("sha2(encode({}, 'UTF-8'), 512)")),
    Function("SHA2", 2, 2, _sha2),
    Function("URL_ENCODE", 1, 1, _strings("url_encode({})")),
    Function("URL_DECODE", 1, 1, _url_decode),
    Function("ENCODE", 2, 2, _encode),
    Function("DECODE", 2, 3, _decode),
]
