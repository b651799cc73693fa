-- An aggregate over an updating GROUP BY: each update of a key's row retracts its old row from
-- its old cnt group (-U) and adds the new one (+U). FIRST_VALUE / LAST_VALUE / LISTAGG keep the
-- values in arrival order and a retraction removes the earliest equal value (a retracted first
-- value makes the next one first); VAR_SAMP / STDDEV_POP replay Welford's steps, retractions
-- included.
SELECT t.cnt, COUNT(*) AS n, FIRST_VALUE(t.k) AS first_k, LAST_VALUE(t.k) AS last_k,
  LISTAGG(t.k) AS ks, LISTAGG(t.fs, '|') AS fss, FIRST_VALUE(t.total) AS first_total,
  LAST_VALUE(t.fs) AS last_fs, VAR_SAMP(t.total) AS var_total, STDDEV_POP(t.total) AS sd_total
FROM (SELECT e.k, COUNT(*) AS cnt, SUM(e.v) AS total, FIRST_VALUE(e.s) AS fs
      FROM events e GROUP BY e.k) t
GROUP BY t.cnt
