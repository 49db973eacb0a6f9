-- Every expand step at once; the words DROP and RENAME in comments and bodies do not count.
CREATE TABLE stock.zones (zone_id text PRIMARY KEY, name text NOT NULL);
ALTER TABLE stock.zones ADD CONSTRAINT zones_name_unique UNIQUE (name);
CREATE UNIQUE INDEX zones_by_name ON stock.zones (name);
ALTER TABLE stock.nodes
  ADD COLUMN zone_id text REFERENCES stock.zones,
  ADD COLUMN weight integer NOT NULL DEFAULT 1 CHECK (weight > 0),
  ADD CONSTRAINT nodes_zone_known FOREIGN KEY (zone_id) REFERENCES stock.zones NOT VALID,
  ALTER COLUMN hostname DROP NOT NULL,
  ALTER COLUMN agent_version SET DEFAULT 'unknown';
CREATE INDEX nodes_by_zone ON stock.nodes (zone_id);
COMMENT ON COLUMN stock.nodes.weight IS 'do not DROP or RENAME; SET NOT NULL later';
CREATE FUNCTION stock.noop() RETURNS void AS $body$
BEGIN
  EXECUTE 'DROP TABLE nothing';
END $body$ LANGUAGE plpgsql;
UPDATE stock.nodes SET weight = 2 WHERE hostname = 'it''s; DROP TABLE x';
