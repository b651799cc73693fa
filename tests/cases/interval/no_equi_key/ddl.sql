CREATE TABLE sensors (
  sensor STRING,
  temp DOUBLE,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
);
CREATE TABLE alarms (
  code INT,
  at_ts TIMESTAMP(3),
  WATERMARK FOR at_ts AS at_ts - INTERVAL '1' SECOND
);
