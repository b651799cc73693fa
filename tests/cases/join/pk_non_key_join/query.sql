-- Both inputs have a PRIMARY KEY but the join is on a non-key column on both sides (region),
-- so the join is many-to-many (north: 2 customers x 2 managers) despite unique PKs.
SELECT c.id, c.cname, c.region, m.mid, m.mname
FROM customers c
JOIN managers m ON c.region = m.region
