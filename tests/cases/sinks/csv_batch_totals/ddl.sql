-- An updating result (a GROUP BY over the whole input) INSERTed INTO a csv table: Flink's
-- streaming mode refuses it (the filesystem sink takes inserted rows only), its batch mode
-- writes the final rows, as twinflow run --mode batch does.
CREATE TABLE sales (
  shop STRING,
  amount DECIMAL(10, 2),
  ts TIMESTAMP(3)
) WITH (
  'connector' = 'filesystem',
  'path' = 'files/sales.csv',
  'format' = 'csv'
);
CREATE TABLE totals (
  shop STRING,
  n BIGINT,
  total DECIMAL(38, 2),
  last_sale TIMESTAMP(3)
) WITH (
  'connector' = 'filesystem',
  'path' = 'out',
  'format' = 'csv'
);
