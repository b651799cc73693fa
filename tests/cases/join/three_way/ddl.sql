CREATE TABLE orders (oid INT, cust_id INT, amount DECIMAL(10,2));
CREATE TABLE customers (cust_id INT, cname STRING, city STRING);
CREATE TABLE shipments (sid INT, oid INT, carrier STRING);
