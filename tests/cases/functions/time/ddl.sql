-- Time functions over edge values: month ends, a leap day, the first millisecond after the
-- epoch, a Sunday, NULLs; TO_TIMESTAMP over text it does and does not read.
CREATE TABLE events (
  id INT,
  ts TIMESTAMP(3),
  epoch BIGINT,
  txt STRING,
  stamp STRING
);
