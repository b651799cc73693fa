CREATE TABLE trades (
  tid INT,
  sym STRING,
  venue STRING,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
);
CREATE TABLE quotes (
  sym STRING,
  venue STRING,
  px INT,
  qt TIMESTAMP(3),
  WATERMARK FOR qt AS qt - INTERVAL '2' SECOND
);
CREATE VIEW latest_quotes AS
SELECT sym, venue, px, qt
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY sym, venue ORDER BY qt DESC) AS rownum
  FROM quotes)
WHERE rownum = 1;
