-- Python UDFs declared as Flink declares them (the module udfs.py beside the SQL), in a
-- projection and in a WHERE conjunct; Nexmark q14's count_char among them.
CREATE TEMPORARY FUNCTION count_char AS 'udfs.count_char' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION discounted AS 'udfs.discounted' LANGUAGE PYTHON;
CREATE FUNCTION initials AS 'udfs.initials' LANGUAGE PYTHON;
CREATE TEMPORARY SYSTEM FUNCTION with_tax AS 'udfs.with_tax' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION palindrome AS 'udfs.palindrome' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION add_to AS 'udfs.add_to' LANGUAGE PYTHON;
SELECT auction, count_char(extra, 'c') AS c_counts, discounted(price, CAST(0.5 AS DOUBLE)) AS half,
  initials(name) AS ini, with_tax(amount) AS taxed, palindrome(extra) AS pal,
  add_to(bidder, -1) AS pm1, count_char(name, 'a') + 1 AS a1
FROM bid
WHERE auction <> 5 AND count_char(extra, 'b') IS NOT NULL
