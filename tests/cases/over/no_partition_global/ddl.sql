CREATE TABLE orders (
  order_id INT,
  shop STRING,
  amount DECIMAL(10, 2),
  qty TINYINT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '10' SECOND
);
