-- Python table functions (words.py): LEFT JOIN LATERAL TABLE .. ON TRUE keeps the rows the
-- function gives none (id 2), a comma join drops them, a WHERE reads the function's columns.
CREATE TEMPORARY FUNCTION split_words AS 'words.split_words' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION upto AS 'words.upto' LANGUAGE PYTHON;
SELECT id, w, l, f0 AS i
FROM t LEFT JOIN LATERAL TABLE(split_words(s)) AS T(w, l) ON TRUE, LATERAL TABLE(upto(n))
WHERE l IS NULL OR l > 1
