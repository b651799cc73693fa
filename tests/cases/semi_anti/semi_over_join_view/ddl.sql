CREATE TABLE customers (id INT, cname STRING, tier INT);
CREATE TABLE orders (oid INT, cust INT, amount INT);
CREATE TABLE vips (cust INT, since INT);
