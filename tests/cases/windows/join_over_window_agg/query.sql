SELECT w.user_id, w.we, w.c, w.mx, u.name
FROM (SELECT user_id, TUMBLE_END(ts, INTERVAL '10' SECOND) AS we, COUNT(*) AS c, MAX(v) AS mx
      FROM clicks GROUP BY user_id, TUMBLE(ts, INTERVAL '10' SECOND)) w
LEFT JOIN users u ON w.user_id = u.user_id AND w.c > 1
