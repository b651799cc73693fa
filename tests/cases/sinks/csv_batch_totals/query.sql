INSERT INTO totals SELECT shop, COUNT(*), SUM(amount), MAX(ts) FROM sales GROUP BY shop;
