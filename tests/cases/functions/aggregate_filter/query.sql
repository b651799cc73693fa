SELECT grp,
  COUNT(*) AS n,
  COUNT(*) FILTER (WHERE i > 0) AS n_pos,
  SUM(i) FILTER (WHERE i > 0) AS sum_pos,
  COUNT(DISTINCT j) FILTER (WHERE id < 5) AS distinct_j,
  MAX(s) FILTER (WHERE id > 10) AS max_none,
  MIN(s) FILTER (WHERE j IS NOT NULL) AS min_s,
  AVG(i) FILTER (WHERE j IS NOT NULL AND i < 100) AS avg_i,
  COUNT(i) FILTER (WHERE MOD(id, 2) = 1) AS odd_ids
FROM scores
GROUP BY grp
