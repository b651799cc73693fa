-- Seed 002's currency conversion as an event-time temporal join: each order joins the rate
-- valid at its time (the latest version at or before it).
SELECT o.order_id, o.amount * r.rate AS converted, o.currency, r.rate, o.order_time
FROM orders AS o
JOIN rates FOR SYSTEM_TIME AS OF o.order_time AS r
ON o.currency = r.currency
