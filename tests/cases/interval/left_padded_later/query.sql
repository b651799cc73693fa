-- LEFT interval join: an order without a shipment within 10 seconds is emitted padded once no
-- shipment can match it any more; a shipment arriving micro-batches after its order joins it
-- without retracting anything.
SELECT o.oid, o.cust, s.carrier, o.ts AS order_ts, s.ts AS ship_ts
FROM orders o LEFT JOIN ships s
ON o.oid = s.oid AND s.ts >= o.ts AND s.ts <= o.ts + INTERVAL '10' SECOND
