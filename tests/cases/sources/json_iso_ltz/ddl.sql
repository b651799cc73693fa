-- Flink's json format, ISO-8601 timestamps: a TIMESTAMP and a TIMESTAMP_LTZ (ending in Z), the
-- event time of a TUMBLE window aggregate.
CREATE TABLE clicks (
  user_name STRING,
  url STRING,
  seen TIMESTAMP_LTZ(3),
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'files/clicks.jsonl',
  'format' = 'json',
  'json.timestamp-format.standard' = 'ISO-8601'
);
