-- Flink's parquet format: columns by name (a column the files lack is NULL), a directory of
-- files of several row groups; made by files/make.py.
CREATE TABLE items (
  id BIGINT,
  name STRING,
  qty INT,
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
  'format' = 'parquet'
);
