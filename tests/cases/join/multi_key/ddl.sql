CREATE TABLE sales (sid INT, region STRING, yr INT, amount BIGINT);
CREATE TABLE targets (region STRING, yr INT, target BIGINT);
