-- IN on an expression of the outer row (UPPER(pcode)) with an inner filter, ANDed with plain conjuncts:
-- tier > 1 drops 2 and the NULL tier, id <> 8 drops a GHI match; XYZ has discount 0; NULL pcode never matches.
SELECT c.id, c.pcode, c.tier
FROM customers c
WHERE c.tier > 1 AND UPPER(c.pcode) IN (SELECT p.pcode FROM promos p WHERE p.discount > 0) AND c.id <> 8
