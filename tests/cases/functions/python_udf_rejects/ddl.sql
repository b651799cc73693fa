CREATE TABLE orders (id INT, shop STRING, qty_text STRING, price DOUBLE);
