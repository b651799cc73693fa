CREATE TABLE bid (auction BIGINT, bidder INT, price DOUBLE, amount DECIMAL(10, 2), name STRING,
  extra STRING);
