-- Parts of a timestamp as functions (issue 44): WEEK is ISO 8601, DAYOFWEEK counts from Sunday = 1;
-- TO_DATE reads what TO_TIMESTAMP reads.
SELECT id, HOUR(ts) AS h, MINUTE(ts) AS mi, SECOND(ts) AS se, YEAR(ts) AS y, MONTH(ts) AS mo,
  DAYOFMONTH(ts) AS dom, DAYOFWEEK(ts) AS dow, DAYOFYEAR(ts) AS doy, QUARTER(ts) AS q, WEEK(ts) AS w,
  TO_DATE('2024-03-05') AS td, TO_DATE(CAST(ts AS STRING)) AS td2, CAST(ts AS DATE) AS dt
FROM t
