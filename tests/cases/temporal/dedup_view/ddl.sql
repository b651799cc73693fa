CREATE TABLE orders (
  order_id INT,
  currency STRING,
  amount INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '10' SECOND
);
CREATE TABLE rates_history (
  currency STRING,
  rate INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '10' SECOND
);
CREATE VIEW versioned_rates AS
SELECT currency, rate, ts
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY currency ORDER BY ts DESC) AS rownum
  FROM rates_history)
WHERE rownum = 1;
