-- Flink's csv format options on a sink: a '|' delimiter (Jackson then quotes almost any text:
-- every character below '|' is one it quotes for), a "'" quote character, a null literal.
CREATE TABLE people (
  id INT,
  name STRING,
  city STRING,
  born DATE,
  height DOUBLE,
  ok BOOLEAN
) WITH (
  'connector' = 'filesystem',
  'path' = 'files/people.csv',
  'format' = 'csv',
  'csv.ignore-parse-errors' = 'true'
);
CREATE TABLE sink (
  id INT,
  name STRING,
  city STRING,
  born DATE,
  height DOUBLE,
  ok BOOLEAN
) WITH (
  'connector' = 'filesystem',
  'path' = 'out',
  'format' = 'csv',
  'csv.field-delimiter' = '|',
  'csv.quote-character' = '''',
  'csv.null-literal' = 'N/A'
);
