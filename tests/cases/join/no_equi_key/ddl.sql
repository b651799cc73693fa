CREATE TABLE bins (bname STRING, lo INT, hi INT);
CREATE TABLE readings (rid INT, v INT);
