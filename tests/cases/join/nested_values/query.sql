SELECT t.id, t.tm, u.tm3, ARRAY[t.v, u.w] AS a, MAP['w', u.w] AS m, ROW(t.k, u.tm3) AS r FROM t JOIN u ON t.k = u.k
