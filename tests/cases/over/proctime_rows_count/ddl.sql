CREATE TABLE visits (
  page STRING,
  ms INT,
  pt AS PROCTIME()
);
