CREATE TABLE clicks (
  user_id STRING,
  url STRING,
  v INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
);
