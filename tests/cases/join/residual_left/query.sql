-- LEFT JOIN with a residual mixing both sides, OR, IS NULL and NOT over a left-only column:
-- rows that match the key but fail the residual (cancelled, too small, NULL flag) are null-padded.
SELECT o.oid, o.cust, o.amount, o.cancelled, p.min_amount, p.code
FROM orders o
LEFT JOIN promos p
  ON o.cust = p.cust
  AND (o.amount >= p.min_amount OR p.min_amount IS NULL)
  AND NOT o.cancelled
