-- Flink's csv format: no header, columns by position; the directory's hidden files
-- (.draft.csv, _SUCCESS) are not read.
CREATE TABLE orders (
  order_id BIGINT,
  customer STRING,
  amount DECIMAL(10, 2),
  price DOUBLE,
  paid BOOLEAN,
  note STRING,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'files/orders',
  'format' = 'csv'
);
