-- A TUMBLE window aggregate (append-only: each window once, when the watermark passes it)
-- INSERTed INTO a json table with ISO-8601 timestamps: one object per line, every column
-- (NULL as null), a DECIMAL's trailing zeros stripped, a DOUBLE's NaN as "NaN".
CREATE TABLE bids (
  auction BIGINT,
  bidder STRING,
  price DECIMAL(10, 2),
  score DOUBLE,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'files/bids.json',
  'format' = 'json'
);
CREATE TABLE per_window (
  window_start TIMESTAMP(3),
  window_end TIMESTAMP(3),
  auction BIGINT,
  bids BIGINT,
  total DECIMAL(38, 2),
  best DOUBLE,
  bidders STRING
) WITH (
  'connector' = 'filesystem',
  'path' = 'out',
  'format' = 'json',
  'json.timestamp-format.standard' = 'ISO-8601'
);
