CREATE TABLE customers (id INT, cname STRING, cap INT);
CREATE TABLE orders (oid INT, cust INT, amount INT);
