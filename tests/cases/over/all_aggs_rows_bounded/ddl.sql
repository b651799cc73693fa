CREATE TABLE readings (
  sensor STRING,
  v INT,
  d DOUBLE,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
);
