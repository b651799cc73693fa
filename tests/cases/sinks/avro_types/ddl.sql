-- INSERT INTO a filesystem table in Flink's avro format, PARTITIONED BY a STRING column: the
-- writer schema Flink makes from the table (each column a nullable union, a DECIMAL as
-- bytes with its precision and scale, TIMESTAMP as timestamp-millis, TIMESTAMP_LTZ and DATE
-- as their logical types, TINYINT/SMALLINT as int) and the records, read back with fastavro;
-- a NULL partition value in __DEFAULT_PARTITION__.
CREATE TABLE trades (
  id INT,
  sym STRING,
  price DECIMAL(10, 2),
  qty DOUBLE,
  f FLOAT,
  ok BOOLEAN,
  d DATE,
  ts TIMESTAMP(3),
  note STRING,
  tiny DECIMAL(10, 8),
  small SMALLINT,
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
  ts TIMESTAMP(3),
  t TIME,
  note STRING,
  tiny DECIMAL(10, 8),
  small SMALLINT,
  byte TINYINT,
  big BIGINT,
  sym STRING
) PARTITIONED BY (sym) WITH (
  'connector' = 'filesystem',
  'path' = 'out',
  'format' = 'avro'
);
