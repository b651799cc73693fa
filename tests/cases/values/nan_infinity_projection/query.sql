-- NaN and ±Infinity are values, not NULL: read as Flink's CSV format reads a DOUBLE / FLOAT
-- (Java's Double.parseDouble: NaN, [+-]Infinity, hexadecimal, a d/f suffix, blanks around,
-- overflow to Infinity), kept through a projection and printed as Flink prints them.
SELECT id, k, d, f, d * 2 AS d2, 0 - d AS neg, f * 2 AS f2
FROM m
