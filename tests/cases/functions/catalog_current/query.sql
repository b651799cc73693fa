-- CURRENT_DATABASE(): the database of Flink's default catalog, where twinflow's tables are.
SELECT id, CURRENT_DATABASE() AS db, CURRENT_DATABASE() = s AS same,
  CHAR_LENGTH(CURRENT_DATABASE()) AS len, UPPER(CURRENT_DATABASE()) AS up
FROM t
