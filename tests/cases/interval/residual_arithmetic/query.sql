-- A LEFT interval join whose residual computes from both inputs: a bid meets an ask of the
-- same item within 5 seconds when the spread (ask - bid) is under 3.
SELECT b.item, b.price AS bid, a.price AS ask, b.ts, a.ts AS ask_ts
FROM bids b LEFT JOIN asks a
ON b.item = a.item AND a.ts BETWEEN b.ts AND b.ts + INTERVAL '5' SECOND
  AND a.price - b.price < 3
