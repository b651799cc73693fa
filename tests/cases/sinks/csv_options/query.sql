INSERT INTO sink SELECT id, UPPER(name), city, born, height, ok FROM people WHERE id > 0;
