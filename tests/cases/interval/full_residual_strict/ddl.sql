CREATE TABLE clicks (
  user_id STRING,
  page STRING,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
);
CREATE TABLE buys (
  user_id STRING,
  amount INT,
  bt TIMESTAMP(3),
  WATERMARK FOR bt AS bt - INTERVAL '2' SECOND
);
