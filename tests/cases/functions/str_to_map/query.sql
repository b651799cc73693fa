-- Flink 2.3's STR_TO_MAP: Java's String.split on regex delimiters (trailing empty parts
-- dropped), a part without the key-value delimiter a key with a NULL value, and the map in a
-- java.util.HashMap's order (buckets of the keys' String.hashCode in a table sized for the
-- parts; a repeated key keeps its first place and its last value).
SELECT id, STR_TO_MAP(s) AS m, CARDINALITY(STR_TO_MAP(s)) AS n, STR_TO_MAP(s)['b'] AS b,
  STR_TO_MAP(s, ';', ':') AS m2, STR_TO_MAP(s, '[,=]', '1') AS m3, STR_TO_MAP('') AS e,
  STR_TO_MAP(s, ',', '=+') AS m4
FROM t
