-- Flink's avro format: fields by name, Avro's promotions (an int field read as a BIGINT), a
-- field the file lacks is NULL; made by files/make.py.
CREATE TABLE items (
  id BIGINT,
  name STRING,
  qty BIGINT,
  price DOUBLE,
  amount DECIMAL(10, 2),
  ok BOOLEAN,
  event_day DATE,
  ts TIMESTAMP(3),
  missing STRING,
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'files/items',
  'format' = 'avro'
);
