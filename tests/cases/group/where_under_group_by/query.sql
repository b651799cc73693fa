-- WHERE under GROUP BY (issue 44: the filter was dropped): rows with a NULL amount and the
-- rows of k = 'c' leave before grouping, so groups e and c are absent.
SELECT k, COUNT(*) AS n, SUM(amount) AS total
FROM payments
WHERE amount IS NOT NULL AND k <> 'c'
GROUP BY k
