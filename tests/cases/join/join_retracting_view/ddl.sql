CREATE TABLE customers (cust STRING, cname STRING, tier INT);
CREATE TABLE orders (oid INT, cust STRING, amount INT);
