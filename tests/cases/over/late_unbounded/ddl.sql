CREATE TABLE pings (
  host STRING,
  ms INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts
);
