-- Common table expressions (issue 44; were refused): each is a view of the query, readable by
-- the ones after it; `payments` inside `big` is the table, `totals` reads `big`.
WITH big AS (
  SELECT k, amount FROM payments WHERE amount >= 10
), totals AS (
  SELECT k, SUM(amount) AS total, COUNT(*) AS n FROM big GROUP BY k
)
SELECT k, total, n
FROM totals
WHERE n > 1
