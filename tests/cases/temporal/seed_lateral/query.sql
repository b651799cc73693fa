-- Seed 002's temporal table function join, as written there.
SELECT
o.amount * r.rate AS yen
FROM
Orders o,
LATERAL Table(Rates(o.`time`)) r
WHERE
o.currency = r.currency
