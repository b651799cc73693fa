CREATE TABLE m (
  id INT,
  k STRING,
  d DOUBLE,
  f FLOAT
);
