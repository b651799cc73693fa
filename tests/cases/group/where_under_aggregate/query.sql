-- WHERE under an aggregate without GROUP BY (issue 44: the filter was dropped, COUNT(*) counted
-- every row in both modes, so parity said equal): only positive amounts are counted and summed.
SELECT COUNT(*) AS n, SUM(amount) AS total, COUNT(DISTINCT k) AS keys, MAX(pid) AS last_pid
FROM payments
WHERE amount > 5
