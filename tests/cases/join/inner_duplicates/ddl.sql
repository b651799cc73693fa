CREATE TABLE orders (oid INT, cust STRING, amount INT);
CREATE TABLE payments (pid INT, cust STRING, paid INT);
