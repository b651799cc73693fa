CREATE TABLE clicks (
  user_id STRING,
  url STRING,
  d DATE,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
);
