CREATE TABLE customers (cust_id INT, cname STRING, region STRING);
CREATE TABLE orders (oid INT, cust_id INT, amount INT);
