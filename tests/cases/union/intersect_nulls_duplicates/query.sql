-- INTERSECT: the distinct rows of a that b has too, NULL equal to NULL (IS NOT DISTINCT
-- FROM), duplicates in either input collapsed; b's BIGINT and a's INT meet as BIGINT.
SELECT k, v FROM a
INTERSECT
SELECT k, v FROM b
