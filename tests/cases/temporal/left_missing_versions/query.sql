-- LEFT temporal join: a trade before its symbol's first quote, of a symbol never quoted, with
-- a NULL symbol, or whose quote fails the residual condition (halted, or too small for the
-- trade) keeps its row, padded with NULLs; two quotes with the same time: the later one wins.
SELECT t.tid, t.sym, t.qty, q.px, q.qt, t.ts
FROM trades t
LEFT JOIN quotes FOR SYSTEM_TIME AS OF t.ts AS q
ON t.sym = q.sym AND NOT q.halted AND q.px * 10 > t.qty
