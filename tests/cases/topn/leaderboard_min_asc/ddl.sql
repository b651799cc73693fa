CREATE TABLE plays (
  player STRING,
  points INT
);
