CREATE TABLE sales (sid INT, region STRING, channel STRING, amount INT);
