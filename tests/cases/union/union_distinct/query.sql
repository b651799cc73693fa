-- UNION (without ALL) drops duplicates across and within its inputs, NULLs included.
SELECT k, v FROM a
UNION
SELECT k, CAST(w AS INT) FROM b WHERE w < 100
