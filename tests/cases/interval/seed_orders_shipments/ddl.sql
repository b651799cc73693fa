CREATE TABLE orders (
  id INT,
  product STRING,
  amount INT,
  ordertime TIMESTAMP(3),
  WATERMARK FOR ordertime AS ordertime - INTERVAL '5' MINUTE
);
CREATE TABLE shipments (
  shipid INT,
  orderId INT,
  carrier STRING,
  shiptime TIMESTAMP(3),
  WATERMARK FOR shiptime AS shiptime - INTERVAL '5' MINUTE
);
