CREATE TABLE customers (id INT, cname STRING);
CREATE TABLE orders (oid INT, cust INT);
