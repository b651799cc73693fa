CREATE TABLE visits (vid INT, page STRING, uid INT, ts TIMESTAMP(3));
CREATE TABLE users (uid INT, uname STRING, tier STRING);
