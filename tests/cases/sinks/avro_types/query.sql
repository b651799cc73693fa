INSERT INTO sink
SELECT id, price, qty, f, ok, d, ts, CAST(ts AS TIME), note, tiny, small,
       CAST(small AS TINYINT), CAST(id AS BIGINT) * 1000000000000, sym
FROM trades;
