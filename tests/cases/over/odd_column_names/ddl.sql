CREATE TABLE odd_table (
  `_id` INT,
  `from` STRING,
  `item price` DOUBLE,
  `Event-Time` TIMESTAMP(3),
  WATERMARK FOR `Event-Time` AS `Event-Time` - INTERVAL '1' SECOND
);
