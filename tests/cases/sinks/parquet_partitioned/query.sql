INSERT INTO sink SELECT id, item, amount, qty, rate, paid, `day`, ts, shop FROM orders;
