SELECT id, name, qty, price, amount, ok, event_day, ts, missing IS NULL AS missing_is_null
FROM items;
