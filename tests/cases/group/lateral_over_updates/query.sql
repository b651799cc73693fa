-- A table function over an updating input (a GROUP BY's LISTAGG): each update retracts the
-- words the old row gave and adds the new row's, and a GROUP BY counts them.
CREATE TEMPORARY FUNCTION split_words AS 'words.split_words' LANGUAGE PYTHON;
SELECT w, COUNT(*) AS n, SUM(l) AS letters
FROM (SELECT k, LISTAGG(s, ' ') AS words FROM t GROUP BY k) AS v,
  LATERAL TABLE(split_words(words)) AS T(w, l)
GROUP BY w
