-- A small shop: customers (one row per customer) and their orders, both arriving as CSV files.
CREATE TABLE customers (
  cust_id STRING,
  name STRING,
  region STRING,
  PRIMARY KEY (cust_id) NOT ENFORCED
);
CREATE TABLE orders (
  order_id BIGINT,
  cust_id STRING,
  amount DECIMAL(10, 2),
  PRIMARY KEY (order_id) NOT ENFORCED
);
