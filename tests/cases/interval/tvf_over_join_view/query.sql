-- A window TVF over a view of a LEFT interval join, windowed by the order time: orders
-- without a shipment within their interval are counted too, padded once no shipment can
-- match them any more, and still in time for their window (Flink holds the watermark back
-- behind the join by its interval).
SELECT window_start, window_end, COUNT(*) AS n, COUNT(carrier) AS shipped
FROM TABLE(TUMBLE(TABLE shipped, DESCRIPTOR(ts), INTERVAL '20' SECOND))
GROUP BY window_start, window_end
