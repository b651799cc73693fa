CREATE TABLE customers (id INT, cname STRING);
CREATE TABLE blocked (cust INT, reason STRING);
