-- String functions over edge values: NULLs, blanks, unicode (a supplementary character and the
-- German sharp s), backslashes and LIKE wildcards as data.
CREATE TABLE texts (
  id INT,
  s STRING,
  s2 STRING,
  n INT
);
