-- Seed 000, bounded ROWS OVER: the highest price among the current and 2 preceding items of the
-- same type. ITEM004 shares ITEM003's time, so it is late in a per-row stream.
SELECT itemID, itemType, onSellTime, price,
  MAX(price) OVER (
    PARTITION BY itemType
    ORDER BY onSellTime
    ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS maxPrice
FROM tmall_item
