-- Integer AVG of a window aggregate adds in BIGINT (no overflow), as a GROUP BY's does; over an
-- OVER window it adds in the argument's type and wraps (cases over/no_partition_global, measured).
SELECT k, window_end AS we, AVG(a) AS aa, AVG(q) AS aq, AVG(s) AS ss, AVG(b) AS ab FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY k, window_start, window_end
