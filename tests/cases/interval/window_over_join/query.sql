-- An interval join's result keeps its time attributes, so a window can aggregate it: shipped
-- orders per 10 seconds of order time. Flink holds the watermark back behind the join by its
-- interval (10 s), so no joined row is late for the window.
SELECT TUMBLE_START(o.ts, INTERVAL '10' SECOND) AS w, COUNT(*) AS shipped,
  COUNT(DISTINCT s.carrier) AS carriers
FROM orders o JOIN ships s
ON o.oid = s.oid AND s.ts >= o.ts AND s.ts <= o.ts + INTERVAL '10' SECOND
GROUP BY TUMBLE(o.ts, INTERVAL '10' SECOND)
