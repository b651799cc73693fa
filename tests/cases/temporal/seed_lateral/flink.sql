-- What Flink runs for query.sql: a temporal table function over Rates (registered with the
-- Table API, which plain SQL cannot do) is the temporal join over the versioned table.
SELECT
o.amount * r.rate AS yen
FROM
Orders o
JOIN Rates FOR SYSTEM_TIME AS OF o.`time` AS r
ON o.currency = r.currency
