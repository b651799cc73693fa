-- Flink's json format, ignore-parse-errors: fields by name (case-sensitive), Jackson's
-- coercions (a string of a number, a number for a STRING, a fraction for an INT), a field that
-- does not convert is NULL, a line that is not a JSON object is dropped.
CREATE TABLE events (
  id INT,
  big BIGINT,
  s STRING,
  d DOUBLE,
  amount DECIMAL(6, 2),
  flag BOOLEAN,
  event_day DATE,
  ts TIMESTAMP(3)
) WITH (
  'connector' = 'filesystem',
  'path' = 'files/events.json',
  'format' = 'json',
  'json.ignore-parse-errors' = 'true'
);
