SELECT id, d, f, d * 2 AS d2, f * 2 AS f2 FROM t
