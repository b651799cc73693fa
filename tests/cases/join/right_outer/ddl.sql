CREATE TABLE products (sku STRING, pname STRING, price DECIMAL(10,2));
CREATE TABLE sales (sid INT, sku STRING, qty INT);
