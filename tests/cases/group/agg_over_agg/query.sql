-- Two aggregation levels: the inner per-key count retracts its old value on every update,
-- so the outer count of groups per cnt must move keys between cnt buckets.
SELECT t.cnt, COUNT(*) AS num_groups
FROM (SELECT e.k, COUNT(*) AS cnt FROM events e GROUP BY e.k) t
GROUP BY t.cnt
