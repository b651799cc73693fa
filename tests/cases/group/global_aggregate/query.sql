-- Aggregate without GROUP BY over a non-empty table: exactly one result row (updated in place
-- in the streaming changelog); NULL x ignored by COUNT(x)/SUM/MAX/MIN.
SELECT COUNT(*) AS n, COUNT(x) AS n_x, SUM(x) AS total, MAX(x) AS mx, MIN(x) AS mn,
  COUNT(DISTINCT tag) AS tags
FROM readings
