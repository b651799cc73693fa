-- Column names that are not Python identifiers (leading underscore, a keyword, a space, a dash)
-- must survive the trip through the stream operator's Python processor unchanged.
SELECT `_id`, `from`, `Event-Time`,
  SUM(`item price`) OVER (PARTITION BY `from` ORDER BY `Event-Time`
                          ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS `total price`
FROM odd_table
