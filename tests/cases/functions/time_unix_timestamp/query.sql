-- UNIX_TIMESTAMP(s, format) with formats of the fields yyyy MM dd HH mm ss (separators, none,
-- quoted text), a time only (1970-01-01), a year and a month only, the first Gregorian day and
-- the last second of 9999, a second before the epoch, NULLs; the format's default; the text
-- DATE_FORMAT writes.
SELECT id,
  UNIX_TIMESTAMP(full_text, 'yyyy-MM-dd HH:mm:ss') AS u_full,
  UNIX_TIMESTAMP(full_text) AS u_default,
  UNIX_TIMESTAMP(day_text, 'dd/MM/yyyy') AS u_day,
  UNIX_TIMESTAMP(compact, 'yyyyMMddHHmmss') AS u_compact,
  UNIX_TIMESTAMP(clock, 'HH:mm:ss') AS u_clock,
  UNIX_TIMESTAMP(stamp, 'yyyy-MM-dd''T''HH:mm') AS u_quoted,
  UNIX_TIMESTAMP(SUBSTRING(stamp FROM 1 FOR 7), 'yyyy-MM') AS u_month,
  UNIX_TIMESTAMP(CONCAT(day_text, ' at ', clock), 'dd/MM/yyyy ''at'' HH:mm:ss') AS u_at,
  FROM_UNIXTIME(UNIX_TIMESTAMP(compact, 'yyyyMMddHHmmss')) AS back,
  UNIX_TIMESTAMP(DATE_FORMAT(ts, 'HH:mm:ss'' on ''dd/MM/yyyy'),
    'HH:mm:ss'' on ''dd/MM/yyyy') AS u_round
FROM t
