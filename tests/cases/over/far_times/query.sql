-- Event times and dates across the whole TIMESTAMP(3) / DATE range: rows at 2250 and at
-- 9999-12-31 23:59:59.999 must be emitted at end of input (the end-of-input marker is no data
-- time). Flink's watermark, like Spark's, starts at 1970: /c, behind /b but before 1970, is not
-- late; /k is.
SELECT user_id, url, d, ts,
  COUNT(*) OVER w AS n,
  MAX(ts) OVER w AS last_ts,
  MIN(d) OVER w AS first_d
FROM clicks
WINDOW w AS (PARTITION BY user_id ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
