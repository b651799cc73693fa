-- JSON_ARRAYAGG over an updating input: a retraction removes the earliest equal element.
SELECT c, JSON_ARRAYAGG(k) AS a, JSON_ARRAYAGG(x NULL ON NULL) AS b
FROM (SELECT k, COUNT(*) AS c, MAX(s) AS x FROM t GROUP BY k)
GROUP BY c
