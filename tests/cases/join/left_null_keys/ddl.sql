CREATE TABLE accounts (acct_id INT, owner_id BIGINT, label STRING);
CREATE TABLE owners (owner_id BIGINT, oname STRING);
