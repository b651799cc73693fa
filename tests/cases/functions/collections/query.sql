-- Flink 2.3's ARRAY_* and MAP_* functions, ELEMENT and SPLIT: NULL elements equal NULL
-- (ARRAY_CONTAINS of NULL finds one, ARRAY_REMOVE of NULL removes them), ARRAY_POSITION of NULL
-- is NULL, ARRAY_SLICE counts negative positions from the end and reads 0 as 1, ARRAY_SORT puts
-- NULLs first ascending and last descending, MAP_UNION takes the last map's entries first,
-- SPLIT splits on the whole separator keeping empty parts ([] for '').
SELECT id, ARRAY_CONTAINS(ARRAY[n, 1], 1) AS c1, ARRAY_CONTAINS(ARRAY[n, 7], k) AS c2,
  ARRAY_CONTAINS(ARRAY[n, NULL], CAST(NULL AS INT)) AS c3, ARRAY_CONTAINS(ARRAY[s, p], 'x') AS c4,
  ARRAY_DISTINCT(ARRAY[n, k, n, NULL, NULL, 1]) AS d1, ARRAY_POSITION(ARRAY[n, 1, n], 1) AS p1,
  ARRAY_POSITION(ARRAY[k, n, NULL], n) AS p2, ARRAY_POSITION(ARRAY[n], CAST(NULL AS INT)) AS p3,
  ARRAY_REMOVE(ARRAY[n, 1, NULL, 1, k], 1) AS r1, ARRAY_REMOVE(ARRAY[n, NULL, k], CAST(NULL AS INT)) AS r2,
  ARRAY_REVERSE(ARRAY[n, NULL, k]) AS rv, ARRAY_SLICE(ARRAY[1, 2, 3, 4, 5], k) AS s1,
  ARRAY_SLICE(ARRAY[1, 2, 3, 4, 5], k, 3) AS s2, ARRAY_SLICE(ARRAY[1, 2, 3, 4, 5], -2, k) AS s3,
  ARRAY_SLICE(ARRAY[1, 2, 3], 0, 0) AS s4, ARRAY_SLICE(ARRAY[1, 2, 3], 2, -9) AS s5,
  ARRAY_UNION(ARRAY[n, 1, 1], ARRAY[2, k, NULL]) AS u1, ARRAY_CONCAT(ARRAY[n], ARRAY[1, NULL], ARRAY[k]) AS cc,
  ARRAY_MAX(ARRAY[n, k, NULL]) AS mx, ARRAY_MIN(ARRAY[s, p]) AS mn, ARRAY_JOIN(ARRAY[s, p, NULL], '-') AS j1,
  ARRAY_JOIN(ARRAY[s, p, NULL], '-', 'N') AS j2, ARRAY_SORT(ARRAY[n, 3, NULL, k]) AS o1,
  ARRAY_SORT(ARRAY[n, 3, NULL, k], FALSE) AS o2, ARRAY_SORT(ARRAY[s, p, 'Z', 'a'], TRUE, FALSE) AS o3,
  ARRAY_SORT(ARRAY[n, NULL, k], FALSE, TRUE) AS o4,
  ARRAY_EXCEPT(ARRAY[n, 1, 1, 2, NULL, k], ARRAY[2, k]) AS ex, ARRAY_INTERSECT(ARRAY[n, 1, 1, NULL, k], ARRAY[1, NULL, n]) AS it,
  ARRAY_APPEND(ARRAY[n], k) AS ap, ARRAY_PREPEND(ARRAY[s], NULL) AS pp, ELEMENT(ARRAY[k]) AS el,
  MAP_KEYS(MAP['a', n, 'b', k]) AS mk, MAP_VALUES(MAP['a', n, 'b', k]) AS mv,
  MAP_ENTRIES(MAP['a', n, 'b', k]) AS me, MAP_UNION(MAP['x', 1, 'a', n], MAP['a', 3, 'y', k]) AS mu,
  MAP_UNION(MAP['k1', n, 'k2', 2, 'k3', 3], MAP['k2', k], MAP['k4', 4, 'k1', 1]) AS mu2,
  MAP_FROM_ARRAYS(ARRAY['a', 'b'], ARRAY[n, k]) AS mfa, MAP_FROM_ARRAYS(ARRAY['k'], ARRAY[s]) AS mfn,
  SPLIT(s, p) AS sp1, SPLIT(s, ',') AS sp2, SPLIT(s, '') AS sp3, SPLIT('', p) AS sp4, SPLIT(s, '.') AS sp5
FROM t
