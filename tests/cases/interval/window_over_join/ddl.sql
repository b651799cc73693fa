CREATE TABLE orders (
  oid INT,
  cust STRING,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
);
CREATE TABLE ships (
  oid INT,
  carrier STRING,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
);
