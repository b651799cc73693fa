-- Seed 002's time-windowed join: a shipment joins its order if it left within 4 hours.
SELECT o.id, o.product, o.amount, s.shipid, s.carrier, o.ordertime, s.shiptime
FROM orders o, shipments s
WHERE o.id = s.orderId AND
      s.shiptime BETWEEN o.ordertime AND o.ordertime + INTERVAL '4' HOUR
