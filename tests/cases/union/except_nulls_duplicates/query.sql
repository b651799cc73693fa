-- EXCEPT: the distinct rows of a that b lacks, NULL equal to NULL; in stream mode a row of a
-- is inserted and deleted again when b's copy arrives later.
SELECT k, v FROM a
EXCEPT
SELECT k, v FROM b
