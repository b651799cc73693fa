CREATE TABLE shop_sales (
  shop_id STRING,
  shop_name STRING,
  category STRING,
  sales BIGINT,
  rating DOUBLE
);
