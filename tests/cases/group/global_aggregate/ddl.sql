CREATE TABLE readings (rid INT, x INT, tag STRING);
