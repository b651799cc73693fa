-- FULL interval join with strict bounds on shifted times (a buy from 1 s to 6 s after a click,
-- both exclusive), a residual over both sides, and NULL keys (which match nothing).
SELECT c.user_id, c.page, c.ts, b.user_id AS buyer, b.amount, b.bt
FROM clicks c FULL OUTER JOIN buys b
ON c.user_id = b.user_id
  AND b.bt - INTERVAL '1' SECOND > c.ts
  AND c.ts + INTERVAL '6' SECOND > b.bt
  AND (b.amount > 2 OR c.page = 'home')
