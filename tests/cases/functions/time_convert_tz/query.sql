-- Flink 2.3's CONVERT_TZ: a lenient SimpleDateFormat('yyyy-MM-dd HH:mm:ss') (numbers of any
-- width that roll over, text after the seconds ignored) in java.util.TimeZone zones (an unknown
-- one, as +08:00 or XYZ, is GMT; EST a fixed -05:00, PST Los Angeles); a wall time the clock
-- skips is read at the offset before the change.
SELECT id, CONVERT_TZ(s, 'UTC', 'America/New_York') AS a, CONVERT_TZ(s, 'America/New_York', 'UTC') AS b,
  CONVERT_TZ(s, 'Asia/Shanghai', 'Europe/Berlin') AS c, CONVERT_TZ(s, 'XYZ', 'GMT+08:00') AS d,
  CONVERT_TZ(s, 'EST', 'PST') AS e, CONVERT_TZ(s, 'Europe/Berlin', 'UTC') AS f,
  CONVERT_TZ(s, 'Africa/Monrovia', 'Asia/Kolkata') AS g, CONVERT_TZ(s, 'GMT+8', '+08:00') AS h
FROM t
