CREATE TABLE orders (oid INT, region STRING, amount DOUBLE);
CREATE TABLE rules (region STRING, threshold INT, label STRING);
