SELECT id, s, d, ts, s IS NULL AS s_is_null FROM t;
