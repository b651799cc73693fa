-- Arithmetic, numeric functions, conditionals and casts over edge values: NULLs, zero,
-- negatives, halves (rounding), large values, text that is and is not a number.
CREATE TABLE nums (
  id INT,
  i INT,
  j INT,
  b BIGINT,
  d DOUBLE,
  m DECIMAL(10, 2),
  f FLOAT,
  t STRING,
  flag BOOLEAN
);
