-- GetInstanceLogs (issue 13): where a run's logs are read from, kept after its stock is
-- released (the release clears node_id), so a FAILED or STOPPED instance's last run can still
-- be read while its node keeps the workload's directory (gpuaas-agent --keep-finished).
-- Neither column is user-visible, so neither bumps the revision.
ALTER TABLE instance.nodes
  -- Where the node agent's own gRPC server (WorkloadLogService) is reached, "host:port", as
  -- its last WatchWorkloads said; '' when it serves none.
  ADD COLUMN agent_address text NOT NULL DEFAULT '';
ALTER TABLE instance.instances
  -- The node and run of the latest run that reached a node; '' and 0 before any did.
  ADD COLUMN log_node_id text NOT NULL DEFAULT '',
  ADD COLUMN log_run integer NOT NULL DEFAULT 0;

-- Follows node_id wherever it is set (a claim), whichever code path sets it, so no step of the
-- reconciler has to remember this.
CREATE FUNCTION instance.instances_remember_log_node() RETURNS trigger AS $$
BEGIN
  IF NEW.node_id <> '' AND NEW.held_run <> 0 THEN
    NEW.log_node_id := NEW.node_id;
    NEW.log_run := NEW.held_run;
  END IF;
  RETURN NEW;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER instances_remember_log_node BEFORE UPDATE ON instance.instances
  FOR EACH ROW EXECUTE FUNCTION instance.instances_remember_log_node();
