-- INNER JOIN with an equality key plus a non-equi residual: amount equal to the threshold
-- fails (strict >), a NULL amount or NULL threshold never passes, several rules per region.
SELECT o.oid, o.region, o.amount, r.threshold, r.label
FROM orders o
JOIN rules r ON o.region = r.region AND o.amount > r.threshold
