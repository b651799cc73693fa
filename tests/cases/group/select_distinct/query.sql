-- SELECT DISTINCT is a GROUP BY of all its columns (issue 44; was refused): a row appears once,
-- the first time its values do, and never leaves (nothing retracts the input).
SELECT DISTINCT k, amount > 10 AS big
FROM payments
WHERE pid <> 4
