-- WatchInstances sends changes in revision order and resumes after a revision, so no revision
-- may become visible after a higher one has been sent. A revision is drawn when a row changes
-- but becomes visible at commit, and transactions commit in any order: the 30 drawn first may
-- commit after the 31. So a transaction holds, from just before its first draw until it ends,
-- a shared advisory lock keyed by the sequence's value at that moment (its floor: every
-- revision it draws is above it). Readers take as their horizon the lower of the sequence's
-- value, read first, and the lowest floor still held, read next (RevisionHorizon): every
-- revision at or below it that will ever be visible is visible to a statement after both.
-- The floor's key is two int4s, (1900000000 + floor / 2^31, floor % 2^31), apart from the
-- single bigint keys of the tenants' quota locks.
CREATE FUNCTION instance.hold_revision_floor() RETURNS void AS $$
DECLARE
  floor bigint;
BEGIN
  -- Once per transaction (the first floor is its lowest); the setting ends with it.
  IF current_setting('instance.revision_floor_held', true) IS DISTINCT FROM 'on' THEN
    SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END INTO floor
      FROM instance.revisions;
    PERFORM pg_advisory_xact_lock_shared((1900000000 + floor / 2147483648)::int4,
                                         (floor % 2147483648)::int4);
    PERFORM set_config('instance.revision_floor_held', 'on', true);
  END IF;
END $$ LANGUAGE plpgsql;

-- Inserts draw their revision here now, after the floor, instead of in the column default.
CREATE FUNCTION instance.instances_before_insert() RETURNS trigger AS $$
BEGIN
  PERFORM instance.hold_revision_floor();
  NEW.revision := nextval('instance.revisions');
  RETURN NEW;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER instances_before_insert BEFORE INSERT ON instance.instances
  FOR EACH ROW EXECUTE FUNCTION instance.instances_before_insert();

CREATE OR REPLACE FUNCTION instance.instances_before_update() RETURNS trigger AS $$
BEGIN
  IF ROW(NEW.name, NEW.desired_state, NEW.state, NEW.reason, NEW.message, NEW.exit_code,
         NEW.node_id, NEW.gpu_uuids, NEW.mig_partition, NEW.ports, NEW.start_time,
         NEW.stop_time, NEW.delete_time, NEW.run)
     IS DISTINCT FROM
     ROW(OLD.name, OLD.desired_state, OLD.state, OLD.reason, OLD.message, OLD.exit_code,
         OLD.node_id, OLD.gpu_uuids, OLD.mig_partition, OLD.ports, OLD.start_time,
         OLD.stop_time, OLD.delete_time, OLD.run) THEN
    PERFORM instance.hold_revision_floor();
    NEW.revision := nextval('instance.revisions');
    NEW.update_time := now();
  END IF;
  RETURN NEW;
END $$ LANGUAGE plpgsql;
