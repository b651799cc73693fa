CREATE TABLE customers (id INT, cname STRING, credit INT);
CREATE TABLE orders (oid INT, cust INT, amount INT);
