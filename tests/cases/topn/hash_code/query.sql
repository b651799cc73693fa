-- HASH_CODE is Java's String.hashCode (UTF-16 code units, 32-bit); % and MOD keep the sign of
-- the dividend.
SELECT s, HASH_CODE(s) AS h, HASH_CODE(s) % 128 AS bucket, MOD(HASH_CODE(s), 7) AS m7,
       n % 3 AS r3, MOD(n, -3) AS rm3
FROM names
