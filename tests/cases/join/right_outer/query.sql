-- RIGHT JOIN: every sale appears; unknown sku p4 and the NULL sku are null-padded on the
-- product side, p2 matches two product rows, product p3 (no sale) disappears.
SELECT s.sid, s.sku, s.qty, p.pname, p.price, s.qty * p.price AS line_total
FROM products p
RIGHT JOIN sales s ON p.sku = s.sku
