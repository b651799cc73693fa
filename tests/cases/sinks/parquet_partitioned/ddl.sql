-- INSERT INTO a parquet table PARTITIONED BY an INT column: the files hold the other columns
-- with their types (read back by pyarrow as Flink's own files read); a NULL partition value
-- in __DEFAULT_PARTITION__.
CREATE TABLE orders (
  id BIGINT,
  shop INT,
  item STRING,
  amount DECIMAL(12, 3),
  qty INT,
  rate DOUBLE,
  paid BOOLEAN,
  `day` DATE,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'files/orders.csv',
  'format' = 'csv',
  'csv.ignore-parse-errors' = 'true'
);
CREATE TABLE sink (
  id BIGINT,
  item STRING,
  amount DECIMAL(12, 3),
  qty INT,
  rate DOUBLE,
  paid BOOLEAN,
  `day` DATE,
  ts TIMESTAMP(3),
  shop INT
) PARTITIONED BY (shop) WITH (
  'connector' = 'filesystem',
  'path' = 'out',
  'format' = 'parquet'
);
