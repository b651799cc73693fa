CREATE TABLE orders (
  order_id INT,
  amount INT,
  currency STRING,
  order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND
);
CREATE TABLE rates (
  currency STRING,
  rate INT,
  update_time TIMESTAMP(3),
  WATERMARK FOR update_time AS update_time - INTERVAL '5' SECOND,
  PRIMARY KEY (currency) NOT ENFORCED
);
