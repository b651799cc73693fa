-- Two equality keys, one an expression: UPPER(s.region) = t.region AND s.yr = t.yr;
-- lower-case 'west' in targets never matches, rows matching only one key vanish, NULLs never match.
SELECT s.sid, s.region, s.yr, s.amount, t.region AS target_region, t.target,
  s.amount - t.target AS diff
FROM sales s
JOIN targets t ON UPPER(s.region) = t.region AND s.yr = t.yr
