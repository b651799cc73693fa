-- FIRST_VALUE and LAST_VALUE over an unbounded RANGE window (Flink's default frame): rows of
-- one time are peers and share the last non-NULL value among them.
SELECT k, ts, x, FIRST_VALUE(x) OVER w AS fx, LAST_VALUE(x) OVER w AS lx,
  FIRST_VALUE(s) OVER w AS fs, LAST_VALUE(s) OVER w AS ls, FIRST_VALUE(d) OVER w AS fd,
  LAST_VALUE(d) OVER w AS ld
FROM e
WINDOW w AS (PARTITION BY k ORDER BY ts)
