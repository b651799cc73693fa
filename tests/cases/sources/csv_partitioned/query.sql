SELECT item, dt, hr, qty, ts, hr IS NULL AS hr_is_null FROM sales;
