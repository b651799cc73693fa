CREATE TABLE customers (id INT, pcode STRING, tier INT);
CREATE TABLE promos (pid INT, pcode STRING, discount DOUBLE);
