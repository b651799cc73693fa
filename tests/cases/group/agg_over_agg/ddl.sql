CREATE TABLE events (eid INT, k STRING);
