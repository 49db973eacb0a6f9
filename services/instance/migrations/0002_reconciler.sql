-- The reconciler's bookkeeping for one run of an instance, beside 0001's: enough to resume
-- every step after a crash without leaking a stock, an attachment or an open usage interval.
-- None of these columns is user-visible, so none bumps the revision (0001's trigger lists the
-- visible ones).
ALTER TABLE instance.instances
  -- The run whose stock, attachment and workload the row may hold; 0 when it holds nothing.
  -- Set before the first claim of a run (so a crash between ClaimStock and its commit still
  -- releases), cleared by the release. The published workload is "<instance_id>.<held_run>".
  ADD COLUMN held_run integer NOT NULL DEFAULT 0,
  -- The agent's last word on held_run's workload (gpuaas.instance.v1.WorkloadState; 0 none).
  -- A complete report without the unpublished workload, and node loss, record STOPPED.
  ADD COLUMN workload_state integer NOT NULL DEFAULT 0,
  -- When the workload started (the report's state_time, never after the report) and stopped.
  ADD COLUMN workload_start_time timestamptz,
  ADD COLUMN workload_stop_time timestamptz,
  -- When the workload left its node's set; set only when it had been in it, so NULL means
  -- there is no agent to wait for.
  ADD COLUMN unpublish_time timestamptz,
  -- held_run's usage interval: 0 none yet, 1 open, 2 closed.
  ADD COLUMN metered smallint NOT NULL DEFAULT 0 CHECK (metered BETWEEN 0 AND 2);

-- Rows holding something on a node, for node loss.
CREATE INDEX instances_held ON instance.instances (node_id) WHERE held_run <> 0;
-- Live runs with an auto-stop, for the once-a-second sweep.
CREATE INDEX instances_auto_stop ON instance.instances (instance_id)
  WHERE held_run <> 0 AND (max_run_time_s > 0 OR idle_timeout_s > 0);
CREATE INDEX nodes_last_seen ON instance.nodes (last_seen);
