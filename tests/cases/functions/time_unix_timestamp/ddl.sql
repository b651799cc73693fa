CREATE TABLE t (id INT, full_text STRING, day_text STRING, compact STRING, clock STRING,
  stamp STRING, ts TIMESTAMP(3));
