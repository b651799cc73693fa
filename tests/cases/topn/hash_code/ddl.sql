CREATE TABLE names (
  s STRING,
  n INT
);
