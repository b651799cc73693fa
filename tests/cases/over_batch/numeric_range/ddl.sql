CREATE TABLE scores (player STRING, round INT, points INT);
