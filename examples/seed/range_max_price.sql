-- Seed 000, bounded RANGE OVER: highest price of the same type within the 2 minutes up to the
-- current item (peers with equal time share a window).
SELECT itemID, itemType, onSellTime, price,
  MAX(price) OVER (
    PARTITION BY itemType
    ORDER BY onSellTime
    RANGE BETWEEN INTERVAL '2' MINUTE PRECEDING AND CURRENT ROW) AS maxPrice
FROM tmall_item
