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
CREATE VIEW shipped AS
SELECT o.oid, o.cust, s.carrier, o.ts
FROM orders o LEFT JOIN ships s
ON o.oid = s.oid AND s.ts BETWEEN o.ts - INTERVAL '2' SECOND AND o.ts + INTERVAL '10' SECOND;
