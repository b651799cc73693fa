-- Comma join with the equality and a one-side filter in WHERE (an inner equi-join):
-- x <= 3 or NULL x is filtered out, dept 20 matches two dept rows, dept 30/40/NULL vanish.
SELECT e.eid, e.ename, e.x, d.dept, d.dname
FROM emps e, depts d
WHERE e.dept = d.dept AND e.x > 3
