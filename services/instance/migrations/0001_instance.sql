-- The image catalog: platform resources. `defaults` is a serialized gpuaas.instance.v1.Template
-- (ports, envs, volumes, probe_timeout; cmd is `command`).
CREATE TABLE instance.images (
  name          text NOT NULL,
  version       text NOT NULL,
  description   text NOT NULL DEFAULT '',
  command       text NOT NULL DEFAULT '',
  oci_reference text NOT NULL DEFAULT '',
  defaults      bytea NOT NULL,
  create_time   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (name, version)
);

-- Every user-visible change of an instance takes the next revision (WatchInstances resumes
-- from one).
CREATE SEQUENCE instance.revisions;

-- Instances. The API writes what the user asks for (desired_state, and the row itself); the
-- reconciler and the agents' reports write where it is (state, reason, node, ports...).
-- state holds gpuaas.instance.v1.State numbers, desired_state DesiredState numbers, reason
-- Reason numbers. `template` is the effective serialized Template (image gaps filled),
-- `ports` a serialized gpuaas.instance.v1.Instance with only its `ports` set.
-- A deleted instance stays as a tombstone (delete_time set) so watchers learn of it; tombstones
-- are purged after a while and watch_horizon remembers the highest purged revision.
CREATE TABLE instance.instances (
  instance_id        text PRIMARY KEY,
  tenant_id          text NOT NULL,
  name               text NOT NULL DEFAULT '',
  spec_name          text NOT NULL,
  gpu_num            integer NOT NULL CHECK (gpu_num >= 0),
  image              text NOT NULL DEFAULT '',
  storage_id         text NOT NULL DEFAULT '',
  template           bytea NOT NULL,
  idle_timeout_s     bigint NOT NULL DEFAULT 0 CHECK (idle_timeout_s >= 0),
  max_run_time_s     bigint NOT NULL DEFAULT 0 CHECK (max_run_time_s >= 0),
  request_hash       text NOT NULL,
  desired_state      integer NOT NULL CHECK (desired_state BETWEEN 1 AND 3),
  state              integer NOT NULL CHECK (state BETWEEN 1 AND 7),
  reason             integer NOT NULL DEFAULT 0,
  message            text NOT NULL DEFAULT '',
  exit_code          integer NOT NULL DEFAULT 0,
  -- Start counter: the workload of run N is "<instance_id>.<N>".
  run                integer NOT NULL DEFAULT 1,
  -- The reconciler's bookkeeping: what it holds for the current run. A row with work to do
  -- has needs_work; next_attempt_time delays retries after a failed step.
  needs_work         boolean NOT NULL DEFAULT true,
  next_attempt_time  timestamptz NOT NULL DEFAULT now(),
  attempts           integer NOT NULL DEFAULT 0,
  stock_id           text NOT NULL DEFAULT '',
  node_id            text NOT NULL DEFAULT '',
  gpu_uuids          text[] NOT NULL DEFAULT '{}',
  mig_partition      text NOT NULL DEFAULT '',
  attached           boolean NOT NULL DEFAULT false,
  host_path          text NOT NULL DEFAULT '',
  -- In its node's desired workload set.
  published          boolean NOT NULL DEFAULT false,
  ports              bytea NOT NULL DEFAULT '',
  -- Idle auto-stop: the last time its GPUs were busy (or the run started).
  last_active_time   timestamptz,
  revision           bigint NOT NULL DEFAULT nextval('instance.revisions'),
  create_time        timestamptz NOT NULL DEFAULT now(),
  update_time        timestamptz NOT NULL DEFAULT now(),
  start_time         timestamptz,
  stop_time          timestamptz,
  delete_time        timestamptz
);
CREATE INDEX instances_by_tenant ON instance.instances (tenant_id, instance_id)
  WHERE delete_time IS NULL;
CREATE INDEX instances_by_revision ON instance.instances (tenant_id, revision);
CREATE INDEX instances_revision ON instance.instances (revision);
CREATE INDEX instances_work ON instance.instances (next_attempt_time) WHERE needs_work;
CREATE INDEX instances_published ON instance.instances (node_id) WHERE published;

CREATE TABLE instance.watch_horizon (
  only_row          boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  purged_revision   bigint NOT NULL DEFAULT 0
);
INSERT INTO instance.watch_horizon DEFAULT VALUES;

-- Every transition, written by the trigger below so no code path can skip one.
CREATE TABLE instance.events (
  instance_id text NOT NULL,
  seq         bigserial,
  time        timestamptz NOT NULL DEFAULT now(),
  state       integer NOT NULL,
  reason      integer NOT NULL DEFAULT 0,
  message     text NOT NULL DEFAULT '',
  PRIMARY KEY (instance_id, seq)
);

-- One row per interval a workload ran (READY until stop, failure or node loss), priced at its
-- start. At most one open interval per instance.
CREATE TABLE instance.usage (
  usage_id        bigserial PRIMARY KEY,
  instance_id     text NOT NULL,
  tenant_id       text NOT NULL,
  spec_name       text NOT NULL,
  node_id         text NOT NULL,
  gpu_num         integer NOT NULL,
  micros_per_hour bigint NOT NULL CHECK (micros_per_hour >= 0),
  currency        text NOT NULL,
  start_time      timestamptz NOT NULL,
  end_time        timestamptz,
  CHECK (end_time IS NULL OR end_time >= start_time)
);
CREATE UNIQUE INDEX usage_one_open ON instance.usage (instance_id) WHERE end_time IS NULL;
CREATE INDEX usage_by_tenant ON instance.usage (tenant_id, start_time);
CREATE INDEX usage_by_instance ON instance.usage (instance_id, start_time);

-- Agents seen by any replica: node lost when last_seen grows old.
CREATE TABLE instance.nodes (
  node_id    text PRIMARY KEY,
  address    text NOT NULL DEFAULT '',
  last_seen  timestamptz NOT NULL DEFAULT now()
);

-- Revision, update_time and events follow from what changed, whoever changed it. Bookkeeping
-- columns (attempts, next_attempt_time, last_active_time...) change no revision.
CREATE FUNCTION instance.instances_before_update() RETURNS trigger AS $$
BEGIN
  IF ROW(NEW.name, NEW.desired_state, NEW.state, NEW.reason, NEW.message, NEW.exit_code,
         NEW.node_id, NEW.gpu_uuids, NEW.mig_partition, NEW.ports, NEW.start_time,
         NEW.stop_time, NEW.delete_time, NEW.run)
     IS DISTINCT FROM
     ROW(OLD.name, OLD.desired_state, OLD.state, OLD.reason, OLD.message, OLD.exit_code,
         OLD.node_id, OLD.gpu_uuids, OLD.mig_partition, OLD.ports, OLD.start_time,
         OLD.stop_time, OLD.delete_time, OLD.run) THEN
    NEW.revision := nextval('instance.revisions');
    NEW.update_time := now();
  END IF;
  RETURN NEW;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER instances_before_update BEFORE UPDATE ON instance.instances
  FOR EACH ROW EXECUTE FUNCTION instance.instances_before_update();

-- Notifications (sent at commit): instance_changes '<tenant_id>' for watchers, instance_work
-- '<instance_id>' for reconcilers, node_workloads '<node_id>' for the agents' streams.
CREATE FUNCTION instance.instances_after_change() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'INSERT' OR NEW.state IS DISTINCT FROM OLD.state
     OR NEW.reason IS DISTINCT FROM OLD.reason THEN
    INSERT INTO instance.events (instance_id, state, reason, message)
      VALUES (NEW.instance_id, NEW.state, NEW.reason, NEW.message);
  END IF;
  IF TG_OP = 'INSERT' OR NEW.revision <> OLD.revision THEN
    PERFORM pg_notify('instance_changes', NEW.tenant_id);
  END IF;
  IF NEW.needs_work AND (TG_OP = 'INSERT' OR NOT OLD.needs_work
                         OR NEW.revision <> OLD.revision
                         OR NEW.next_attempt_time < OLD.next_attempt_time) THEN
    PERFORM pg_notify('instance_work', NEW.instance_id);
  END IF;
  IF TG_OP = 'INSERT' THEN
    IF NEW.published THEN
      PERFORM pg_notify('node_workloads', NEW.node_id);
    END IF;
  ELSIF NEW.published IS DISTINCT FROM OLD.published OR NEW.node_id IS DISTINCT FROM OLD.node_id
        OR (NEW.published AND NEW.run <> OLD.run) THEN
    IF OLD.published THEN
      PERFORM pg_notify('node_workloads', OLD.node_id);
    END IF;
    IF NEW.published THEN
      PERFORM pg_notify('node_workloads', NEW.node_id);
    END IF;
  END IF;
  RETURN NULL;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER instances_after_change AFTER INSERT OR UPDATE ON instance.instances
  FOR EACH ROW EXECUTE FUNCTION instance.instances_after_change();
