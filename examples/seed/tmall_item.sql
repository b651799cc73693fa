-- Seed 000: the tmall_item table (WATERMARK = event time, so equal times arrive late).
CREATE TABLE tmall_item (
  itemID VARCHAR,
  itemType VARCHAR,
  onSellTime TIMESTAMP(3),
  price DOUBLE,
  WATERMARK FOR onSellTime AS onSellTime
);
