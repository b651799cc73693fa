-- Flink 2.3's OVERLAPS (Calcite's expansion): an interval second element is an end point,
-- each pair sorted, then e0 >= s1 AND e1 >= s0; touching end points overlap, a NULL end point
-- gives NULL unless the other comparison is FALSE.
SELECT id,
  (a, b) OVERLAPS (c, d) AS o1,
  (c, d) OVERLAPS (a, b) AS o2,
  (a, INTERVAL '1' HOUR) OVERLAPS (c, d) AS o3,
  (a, b) OVERLAPS (c, INTERVAL '30' MINUTE) AS o4,
  (b, INTERVAL '-1' HOUR) OVERLAPS (c, INTERVAL '0' SECOND) AS o5,
  (dt, dt2) OVERLAPS (DATE '2024-01-03', INTERVAL '1' DAY) AS o6,
  (dt, INTERVAL '2' DAY) OVERLAPS (dt2, dt2) AS o7,
  NOT ((a, b) OVERLAPS (c, d)) AS o8,
  CASE WHEN (a, b) OVERLAPS (c, d) THEN 'y' ELSE 'n' END AS o9
FROM t
