INSERT INTO per_window
SELECT window_start, window_end, auction, COUNT(*), SUM(price), MAX(score),
       MAX(bidder)
FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY window_start, window_end, auction;
