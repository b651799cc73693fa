-- Join without any equality (range condition only): bins overlap (v=7 is in low and mid),
-- bounds are lo <= v < hi, a NULL hi or NULL v never satisfies the condition.
SELECT b.bname, b.lo, b.hi, r.rid, r.v
FROM bins b
JOIN readings r ON b.lo <= r.v AND r.v < b.hi
