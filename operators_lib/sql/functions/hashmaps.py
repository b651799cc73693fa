"""STR_TO_MAP(text [, listDelimiter, keyValueDelimiter]) as Flink 2.3 builds it
(SqlFunctionUtils.strToMap): an empty text is an empty map; else the text split on the list
delimiter (a Java regex, String.split: trailing empty parts dropped), each part split once on
the key-value delimiter (a part without it is a key with a NULL value), put in order into a
java.util.HashMap sized for the parts (CollectionUtil.newHashMapWithExpectedSize), whose
iteration order is the map's: by bucket (the key's String.hashCode, spread, modulo the table
size), then by first insertion; a repeated key keeps its place and takes the last value.
A bucket of 9 keys or more (where Java's map would grow or become a tree) is refused.
"""

from __future__ import annotations

from operators_lib.sql.functions.base import Call, Function, _string, value_refused
from operators_lib.sql.functions.json_text import let, q


def _delimiter(c: Call, i: int, default: str) -> str:
    if len(c.args) <= i:
        return q(default)
    pattern = c.string(i, "delimiter")
    if c.env.regex_groups(pattern) is None:
        raise c.reject(f"STR_TO_MAP with the delimiter {pattern!r}, which Java rejects as a "
                       "regex (Flink's job fails), is not supported")
    return q(pattern)


def _java_split(text: str, regex: str) -> str:
    """Java's String.split(regex): Spark's split keeps the trailing empty parts, dropped here."""
    def trimmed(parts: str) -> str:
        from_end = f"array_position(reverse(transform({parts}, jsp -> jsp <> '')), true)"
        return f"slice({parts}, 1, IF({from_end} = 0, 0, size({parts}) - {from_end} + 1))"
    return let(f"split({text}, {regex}, -1)", trimmed)


def _hash_code(key: str) -> str:
    """Java's String.hashCode of ``key`` (over its UTF-16 units), as an unsigned 32-bit BIGINT."""
    units = f"regexp_extract_all(hex(encode({key}, 'UTF-16BE')), '.{{4}}', 0)"
    return (f"aggregate({units}, 0L, (jh, ju) -> "
            f"pmod(jh * 31 + CAST(conv(ju, 16, 10) AS BIGINT), 4294967296L))")


def _str_to_map(c: Call) -> str:
    c.require(0, _string, "a string")
    text = c.sql[0]
    pairs_of, kv = _delimiter(c, 1, ","), _delimiter(c, 2, "=")

    def build(parts: str) -> str:
        n = f"size({parts})"
        wanted = f"IF({n} <= 2, {n} + 1, CAST(({n} * 4 + 2) DIV 3 AS INT))"
        table = f"aggregate(sequence(0, 30), 1, (jc, ji) -> IF(jc < {wanted}, jc * 2, jc))"
        pairs = (f"transform({parts}, (jp, ji) -> named_struct('i', ji, 'kv', "
                 f"split(jp, {kv}, 2), 'p', jp))")

        def ordered(entries: str) -> str:
            keys = f"transform({entries}, je -> je.k)"
            spread = f"(je.h ^ shiftright(je.h, 16)) & ({table} - 1)"
            placed = (f"sort_array(transform({entries}, je -> named_struct('b', {spread}, "
                      f"'f', array_position({keys}, je.k), 'i', je.i, 'k', je.k, 'v', je.v)))")
            crowded = (f"exists({placed}, jb -> size(array_distinct(transform(filter({placed}, "
                       f"jo -> jo.b = jb.b), jo -> jo.k))) >= 9)")
            refused = value_refused(f"concat('STR_TO_MAP of a text whose map Java would grow "
                                    f"or make a tree (9 keys in one bucket): ', substr({text}, "
                                    "1, 60))", "map<string,string>")
            return (f"IF({crowded}, {refused}, map_from_entries(transform({placed}, "
                    f"jo -> struct(jo.k, jo.v))))")
        entries = (f"transform({pairs}, jq -> named_struct('i', jq.i, 'k', IF(size(jq.kv) < 2, "
                   f"jq.p, jq.kv[0]), 'v', IF(size(jq.kv) < 2, CAST(NULL AS STRING), "
                   f"jq.kv[1]), 'h', {_hash_code('IF(size(jq.kv) < 2, jq.p, jq.kv[0])')}))")
        return let(entries, ordered)
    return (f"CASE WHEN {text} IS NULL THEN NULL WHEN {text} = '' THEN "
            f"CAST(map() AS map<string,string>) ELSE {let(_java_split(text, pairs_of), build)} "
            "END")


FUNCTIONS = [Function("STR_TO_MAP", 1, 3, _str_to_map)]
