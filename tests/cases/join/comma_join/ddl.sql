CREATE TABLE emps (eid INT, dept INT, x INT, ename STRING);
CREATE TABLE depts (dept INT, dname STRING);
