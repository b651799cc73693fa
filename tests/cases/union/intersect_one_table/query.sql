-- INTERSECT of two filters of one table: a key is inserted when its second side first sees
-- it; NULL keys meet as equal. Flink reads the table twice and the two scans race, so only
-- the finals are compared (its changelog order changes from run to run).
SELECT k FROM a WHERE v < 3
INTERSECT
SELECT k FROM a WHERE v >= 3
