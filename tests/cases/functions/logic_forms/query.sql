-- Three-valued logic's tests as Flink's functions page lists them (issue 44's catalog table).
SELECT id, n NOT BETWEEN 1 AND 3 AS nb, b IS TRUE AS it, b IS NOT TRUE AS nt, b IS FALSE AS isf,
  b IS NOT FALSE AS nf, b IS UNKNOWN AS iu, b IS NOT UNKNOWN AS nu
FROM t
