-- INSERT INTO a filesystem table in Flink's csv format, PARTITIONED BY a STRING column: no
-- header, Flink's rendering of each type (a DECIMAL's trailing zeros stripped, 1E+2), Jackson's
-- quoting (a space or a '#' quotes a text), a NULL or empty partition value in
-- __DEFAULT_PARTITION__, folder names escaped (x%3Ay z), a success file in each partition.
CREATE TABLE trades (
  id INT,
  sym STRING,
  price DECIMAL(10, 2),
  qty DOUBLE,
  f FLOAT,
  ok BOOLEAN,
  d DATE,
  t TIME,
  ts TIMESTAMP(3),
  note STRING,
  tiny DECIMAL(10, 8),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'files/trades.csv',
  'format' = 'csv',
  'csv.ignore-parse-errors' = 'true'
);
CREATE TABLE sink (
  id INT,
  price DECIMAL(10, 2),
  qty DOUBLE,
  f FLOAT,
  ok BOOLEAN,
  d DATE,
  t TIME,
  ts TIMESTAMP(3),
  ltz TIMESTAMP_LTZ(3),
  note STRING,
  tiny DECIMAL(10, 8),
  big BIGINT,
  sym STRING
) PARTITIONED BY (sym) WITH (
  'connector' = 'filesystem',
  'path' = 'out',
  'format' = 'csv',
  'sink.partition-commit.policy.kind' = 'success-file',
  'sink.rolling-policy.file-size' = '128MB'
);
