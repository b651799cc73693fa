CREATE TABLE orders (oid INT, cust STRING, amount INT, cancelled BOOLEAN);
CREATE TABLE promos (cust STRING, min_amount INT, code STRING);
