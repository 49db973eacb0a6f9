-- Test migrations for libs/db (migrate_test.cc). The text below is awkward on purpose: it holds
-- a raw-string opener R"( and closer )" , a backslash \ , a ; inside a literal, and "quotes".
CREATE TABLE items (
  item_id   bigint PRIMARY KEY,
  label     text NOT NULL DEFAULT 'semi;colon )" \n',
  CONSTRAINT items_label_nonempty CHECK (label <> '')
);

CREATE TABLE apply_log (version int NOT NULL);
INSERT INTO apply_log VALUES (1);

CREATE FUNCTION touch() RETURNS int LANGUAGE plpgsql AS $body$
BEGIN
  RETURN 1;  -- a body with its own ; inside dollar quotes
END
$body$;
