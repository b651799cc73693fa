CREATE TABLE events (
  id INT,
  region STRING,
  kind STRING,
  price DOUBLE,
  qty INT,
  ts TIMESTAMP(3),
  total AS price * qty,
  WATERMARK FOR ts AS ts - INTERVAL '3' SECOND,
  PRIMARY KEY (id) NOT ENFORCED
);
