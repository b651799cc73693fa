CREATE TABLE customers (id INT, cname STRING, region STRING);
CREATE TABLE orders (oid INT, cust INT, region STRING);
