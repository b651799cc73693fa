-- EXCEPT of two filters of one table: a key is inserted by a low row and deleted (-D) when a
-- high row of it arrives; a NULL key likewise. Flink reads the table twice and the scans race
-- (measured: "+I x" alone in one run, five rows in another): only the finals are compared.
SELECT k FROM a WHERE v < 3
EXCEPT
SELECT k FROM a WHERE v >= 3
