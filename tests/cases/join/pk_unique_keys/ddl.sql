CREATE TABLE customers (id INT, cname STRING, segment STRING, PRIMARY KEY (id) NOT ENFORCED);
CREATE TABLE orders (oid INT, cust_id INT, amount INT, PRIMARY KEY (oid) NOT ENFORCED);
