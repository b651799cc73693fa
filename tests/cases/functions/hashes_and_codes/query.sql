-- Flink 2.3's SHA224 / SHA384 / SHA512 / SHA2 (lower-case hex of the UTF-8 bytes), URL_ENCODE /
-- URL_DECODE (java.net.URLEncoder / URLDecoder: an invalid escape is NULL, an incomplete UTF-8
-- sequence U+FFFD) and DECODE(ENCODE(s, cs), cs) (US-ASCII and ISO-8859-1 replace what they
-- lack by '?', one per code point).
SELECT id, SHA224(s) AS h224, SHA384(s) AS h384, SHA512(s) AS h512, SHA2(s, 256) AS x256,
  SHA2(s, bits) AS xb, URL_ENCODE(s) AS ue, URL_DECODE(u) AS ud, URL_DECODE(URL_ENCODE(s)) AS rt,
  DECODE(ENCODE(s, 'US-ASCII'), 'US-ASCII') AS ascii, DECODE(ENCODE(s, 'ISO-8859-1'),
  'iso-8859-1') AS latin, DECODE(ENCODE(s, 'UTF-16'), 'UTF-16') AS u16,
  DECODE(ENCODE(s, 'utf-8'), 'UTF-8') AS u8
FROM t
