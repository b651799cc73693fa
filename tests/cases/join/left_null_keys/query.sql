-- LEFT JOIN with NULL keys on both sides: left rows with a NULL key come out null-padded
-- (exactly once each), right rows with a NULL key never match; unmatched key 30 padded too.
SELECT a.acct_id, a.owner_id AS acct_owner, a.label, o.owner_id AS owner_key, o.oname
FROM accounts a
LEFT JOIN owners o ON a.owner_id = o.owner_id
