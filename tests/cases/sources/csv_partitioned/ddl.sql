-- A partitioned filesystem table: its partition columns' values are its files' key=value
-- folders (__DEFAULT_PARTITION__: NULL), not fields of its csv files.
CREATE TABLE sales (
  item STRING,
  dt STRING,
  qty INT,
  hr INT,
  ts TIMESTAMP(3)
) PARTITIONED BY (dt, hr) WITH (
  'connector' = 'filesystem',
  'path' = 'files/sales',
  'format' = 'csv'
);
