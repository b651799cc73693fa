-- FULL OUTER JOIN: unmatched rows from both sides (keys 1, 3, 4, 6 and both NULL keys) come out
-- padded; duplicates multiply (key 2: 2x2 rows, key 5: 2x2 rows).
SELECT COALESCE(l.k, r.k) AS k, l.k AS lk, l.lv, r.k AS rk, r.rv
FROM lefts l
FULL OUTER JOIN rights r ON l.k = r.k
