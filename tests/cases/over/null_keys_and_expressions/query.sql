-- PARTITION BY an expression (UPPER(region): 'EU' and 'eu' are one partition; NULL regions form
-- their own partition), a computed column (total = price * qty), a WHERE before the window,
-- an arithmetic over the aggregate, and a filter on the OVER result in an outer query.
-- The CSV header lists the columns in another order and case than the DDL.
SELECT * FROM (
  SELECT id, region, ts, total,
    SUM(total) OVER w AS region_total,
    MAX(total) OVER w * 2 AS double_max,
    COUNT(total) OVER w AS priced
  FROM events
  WHERE kind <> 'x'
  WINDOW w AS (PARTITION BY UPPER(region) ORDER BY ts
               RANGE BETWEEN INTERVAL '5' SECOND PRECEDING AND CURRENT ROW)
) WHERE priced > 0 OR region IS NULL
