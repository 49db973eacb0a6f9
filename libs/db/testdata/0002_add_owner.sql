ALTER TABLE items ADD COLUMN owner text;
INSERT INTO apply_log VALUES (2);
