SELECT k, MAX(tm) AS mx, MIN(tl) AS mn, MAX(ts0) AS mts0, COUNT(*) AS c FROM t GROUP BY k
