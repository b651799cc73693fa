CREATE TABLE payments (pid INT, k STRING, amount INT);
