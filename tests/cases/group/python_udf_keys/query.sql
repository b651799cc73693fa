-- Python UDFs (tally.py) as a GROUP BY key, inside aggregates and in WHERE: a changelog
-- with updates, in both modes.
CREATE TEMPORARY FUNCTION vowels AS 'tally.vowels' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION squared AS 'tally.squared' LANGUAGE PYTHON;
SELECT vowels(name) AS v, COUNT(*) AS n, SUM(squared(x)) AS sq, MAX(vowels(tag)) AS mt
FROM t
WHERE id <> 6 AND squared(x) < 100
GROUP BY vowels(name)
