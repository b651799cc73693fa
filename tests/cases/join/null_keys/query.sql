-- INNER JOIN on two keys with NULLs on both sides: a NULL key never equals anything,
-- not even another NULL (rows 2, 3, 5, 7 and tags t2, t3, t5, t6, t7 never match).
SELECT i.id, i.k, i.n, i.x, t.tag
FROM items i
JOIN tags t ON i.k = t.k AND i.n = t.n
