-- Flink 2.3's PRINTF: java.util.Formatter (Locale.US) over its internal values: NULL prints
-- null, a DECIMAL its plain text, a timestamp as Java's LocalDateTime; NULL where the format is
-- NULL or Java throws (a bad flag, a missing argument, an unknown conversion, %d of a non-NULL
-- STRING or %f of a non-NULL DECIMAL).
SELECT id,
  PRINTF('%s|%d|%s', s, n, b) AS a, PRINTF('%5.2f|%s|%e', d, d, d) AS b2,
  PRINTF('%s|%s', m, bo) AS c, PRINTF('%s|%s', ts, tl) AS t,
  PRINTF('%x|%08d|%-4s|%%', n, n, s) AS e, PRINTF('no args') AS f, PRINTF('%s %s', s) AS g,
  PRINTF('%b|%B', bo, s) AS i, PRINTF('%,d', b) AS j, PRINTF('%s|%S', f, s) AS k,
  PRINTF('%.3s', s) AS l, PRINTF('%s', CAST(0.00000001 AS DECIMAL(10, 8))) AS tiny,
  PRINTF('%-s', s) AS nw, PRINTF('%.2d', n) AS np, PRINTF('%d', s) AS ds, PRINTF('%f', m) AS fm,
  PRINTF(CAST(NULL AS STRING), n) AS nf, PRINTF('%2$s %1$s %<s', s, n) AS ix,
  PRINTF('%q', n) AS uq, PRINTF('%o|%X|%+d|% d|%(d', n, n, n, n, n) AS o,
  PRINTF('%10.4e|%-10.1f|%g|%a', d, d, d, d) AS fl, PRINTF('%s', CAST(n AS SMALLINT)) AS sm
FROM t
