-- Flink's csv format with the options users set: a delimiter, a quote character, comments, a
-- NULL literal and ignore-parse-errors (a field that does not parse is NULL, a short row is
-- padded, a long one dropped).
CREATE TABLE t (
  id INT,
  s STRING,
  d DOUBLE,
  ts TIMESTAMP(3)
) WITH (
  'connector' = 'filesystem',
  'path' = 'files/t.txt',
  'format' = 'csv',
  'csv.field-delimiter' = ';',
  'csv.quote-character' = '''',
  'csv.allow-comments' = 'true',
  'csv.null-literal' = 'NULL',
  'csv.ignore-parse-errors' = 'true'
);
