SELECT id, big, s, d, amount, flag, event_day, ts, s IS NULL AS s_is_null FROM events;
