CREATE TABLE shop_sales (
  shop_id STRING,
  category STRING,
  sales BIGINT
);
