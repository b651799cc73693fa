-- Statistical aggregates, FIRST_VALUE, LAST_VALUE and LISTAGG in TUMBLE windows: a window's
-- values in arrival order (b's 00:00:06 row arrives after its 00:00:07 row), NULLs skipped, a
-- one-row window's sample variance NULL; the last row is late and dropped.
SELECT k, window_start, window_end, STDDEV_POP(x) AS sp_x, STDDEV_SAMP(d) AS ss_d,
  VAR_POP(m) AS vp_m, VAR_SAMP(x) AS vs_x, FIRST_VALUE(s) AS first_s, LAST_VALUE(x) AS last_x,
  LISTAGG(s) AS ss, LISTAGG(s, '-') AS ss2
FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY k, window_start, window_end
