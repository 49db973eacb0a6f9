CREATE INDEX items_owner_idx ON items (owner);
INSERT INTO apply_log VALUES (10);
