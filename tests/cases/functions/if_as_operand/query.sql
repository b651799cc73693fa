-- IF(c, a, b) as an operand of a comparison, inside CASE and in WHERE (found by the SQL fuzzer:
-- the renderer took every IF operand for a WHEN .. THEN of CASE and dropped its ELSE, so Spark
-- refused `if` with 2 arguments: an exit 3; then, seed 9, the same for IF() as CASE's ELSE).
SELECT id, NULLIF(id, 2) > IF(f, a, id) AS x,
  CASE WHEN IF(f, TRUE, FALSE) THEN 1 ELSE 0 END AS y,
  IF(a > 0, 'p', 'n') = 'p' AS z,
  CASE WHEN f THEN MOD(id, -4) ELSE IF(f, 0, a) END AS w
FROM t
WHERE IF(f, a, id) IS NOT NULL
