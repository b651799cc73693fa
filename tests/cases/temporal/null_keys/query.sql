-- Flink's temporal join is keyed by the join key and does not test it again: a NULL key (or a
-- key with a NULL part) joins the versions with the same NULLs, unlike a regular join.
SELECT t.tid, t.sym, t.venue, q.px, q.qt
FROM trades AS t
LEFT JOIN latest_quotes FOR SYSTEM_TIME AS OF t.ts AS q
ON t.sym = q.sym AND t.venue = q.venue
