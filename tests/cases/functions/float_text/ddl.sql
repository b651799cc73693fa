-- DOUBLE and FLOAT values that Java 17's Double/Float.toString (Flink's JVM) prints with more
-- digits than the shortest decimal, beside ordinary ones.
CREATE TABLE t (
  id INT,
  d DOUBLE,
  f FLOAT
);
