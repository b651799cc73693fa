-- Aggregates with FILTER (WHERE ..): twinflow rewrites agg(x) FILTER (WHERE c) to
-- agg(CASE WHEN c THEN x END); SUM over INT wraps on overflow as in Flink.
CREATE TABLE scores (
  id INT,
  grp STRING,
  i INT,
  j INT,
  s STRING
);
