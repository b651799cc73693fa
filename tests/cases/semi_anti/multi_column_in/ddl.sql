CREATE TABLE orders (oid INT, cust INT, region STRING);
CREATE TABLE vip (cust INT, region STRING, tier INT);
