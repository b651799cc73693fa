INSERT INTO sink
SELECT id, price, qty, f, ok, d, t, ts, CAST(ts AS TIMESTAMP_LTZ(3)), note,
       tiny, CAST(id AS BIGINT) * 10000000000, sym
FROM trades
WHERE id <> 7;
