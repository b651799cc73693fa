-- A LEFT JOIN whose residual computes values from both inputs: arithmetic over INT and BIGINT
-- (BIGINT result), DOUBLE, and text concatenation; NULL in any operand makes it unknown.
SELECT a.k, a.v, a.name, b.w, b.code, b.f
FROM a LEFT JOIN b
ON a.k = b.k
  AND a.v + b.w > 100
  AND (a.v * 2 - b.w <> 10 OR a.name || b.code = 'xy')
  AND -b.f * a.v < 500.5
