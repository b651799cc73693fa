-- The versioned view of an append-only history (deduplicated to the latest row per key), as in
-- Flink's documentation: the view's key is the versioned table's key. A history row older than
-- the latest of its key when it arrives (EUR at 00:00:04) is no version.
SELECT o.order_id, o.currency, o.amount, r.rate, r.ts AS rate_ts
FROM orders AS o
LEFT JOIN versioned_rates FOR SYSTEM_TIME AS OF o.ts AS r
ON o.currency = r.currency
