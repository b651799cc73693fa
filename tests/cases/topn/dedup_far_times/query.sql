-- Keep-first deduplication over event times across the whole TIMESTAMP(3) range: u3's first
-- row (2250) fires once the watermark passes it, u4's (9999-12-31 23:59:59.999) only at end of
-- input; /k is late (behind 2250).
SELECT user_id, url, d, ts
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts ASC) AS rn
  FROM clicks)
WHERE rn = 1
