CREATE TABLE Orders (
  amount INT,
  currency STRING,
  `time` TIMESTAMP(3),
  WATERMARK FOR `time` AS `time` - INTERVAL '1' MINUTE
);
CREATE TABLE Rates (
  currency STRING,
  rate INT,
  `time` TIMESTAMP(3),
  WATERMARK FOR `time` AS `time` - INTERVAL '1' MINUTE,
  PRIMARY KEY (currency) NOT ENFORCED
);
