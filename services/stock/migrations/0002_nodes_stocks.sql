-- Nodes as their agents register them. `generation` is bumped by every change to what placement
-- sees of the node (its stocks, capacity, GPU health, readiness, cordon): a writer that placed
-- from an older view finds its guard `UPDATE ... WHERE generation = <seen>` matching no row and
-- places again, so a stale view never overbooks (OpenStack Placement's scheme).
CREATE TABLE stock.nodes (
  node_id        text PRIMARY KEY,
  hostname       text NOT NULL,
  cpu_millis     bigint NOT NULL CHECK (cpu_millis >= 0),
  memory_bytes   bigint NOT NULL CHECK (memory_bytes >= 0),
  disk_bytes     bigint NOT NULL CHECK (disk_bytes >= 0),
  agent_version  text NOT NULL DEFAULT '',
  ready          boolean NOT NULL DEFAULT true,
  cordoned       boolean NOT NULL DEFAULT false,
  draining       boolean NOT NULL DEFAULT false,  -- released stocks are deleted, not returned
  heartbeat_time timestamptz NOT NULL DEFAULT now(),
  gpu_metrics    bytea NOT NULL DEFAULT '',  -- the last heartbeat's readings (HeartbeatRequest)
  generation     bigint NOT NULL DEFAULT 1,
  create_time    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE stock.node_labels (
  node_id text NOT NULL REFERENCES stock.nodes ON DELETE CASCADE,
  key     text NOT NULL,
  value   text NOT NULL,
  PRIMARY KEY (node_id, key)
);

CREATE TABLE stock.gpus (
  node_id     text NOT NULL REFERENCES stock.nodes ON DELETE CASCADE,
  gpu_index   integer NOT NULL CHECK (gpu_index >= 0),
  uuid        text NOT NULL UNIQUE,
  model       text NOT NULL,
  memory_mib  bigint NOT NULL CHECK (memory_mib >= 0),
  mig_enabled boolean NOT NULL DEFAULT false,
  healthy     boolean NOT NULL DEFAULT true,
  present     boolean NOT NULL DEFAULT true,  -- false once its agent stops reporting it
  last_xid    integer NOT NULL DEFAULT 0,
  PRIMARY KEY (node_id, gpu_index)
);

-- A stock holds its resources from creation to deletion, whatever its state. The spec's
-- foreign key makes DeleteSpec fail FAILED_PRECONDITION while stocks of it exist.
CREATE TABLE stock.stocks (
  stock_id        text PRIMARY KEY,
  spec_name       text NOT NULL REFERENCES stock.specs ON DELETE RESTRICT,
  node_id         text NOT NULL REFERENCES stock.nodes,
  state           smallint NOT NULL,  -- StockState
  instance_id     text UNIQUE,        -- set exactly when CLAIMED
  cpu_millis      bigint NOT NULL CHECK (cpu_millis >= 0),
  memory_bytes    bigint NOT NULL CHECK (memory_bytes >= 0),
  disk_bytes      bigint NOT NULL CHECK (disk_bytes >= 0),
  mig_profile     text NOT NULL DEFAULT '',
  mig_start_slice integer NOT NULL DEFAULT 0,
  mig_slices      integer NOT NULL DEFAULT 0,
  create_time     timestamptz NOT NULL DEFAULT now(),
  update_time     timestamptz NOT NULL DEFAULT now(),
  CHECK ((state = 2) = (instance_id IS NOT NULL))
);
CREATE INDEX stocks_by_spec_state ON stock.stocks (spec_name, state);
CREATE INDEX stocks_by_node ON stock.stocks (node_id);

-- The GPUs a stock holds: `milli` of each (1000 = whole; 0 for the GPU a MIG slice lives on).
CREATE TABLE stock.stock_gpus (
  stock_id  text NOT NULL REFERENCES stock.stocks ON DELETE CASCADE,
  node_id   text NOT NULL,
  gpu_index integer NOT NULL,
  milli     integer NOT NULL CHECK (milli BETWEEN 0 AND 1000),
  PRIMARY KEY (stock_id, gpu_index),
  FOREIGN KEY (node_id, gpu_index) REFERENCES stock.gpus
);
CREATE INDEX stock_gpus_by_gpu ON stock.stock_gpus (node_id, gpu_index);

-- The first answer of each CreateStocks/DeleteStocks operation, returned to its retries.
CREATE TABLE stock.operations (
  operation_key text PRIMARY KEY,  -- stock.requests.result_id
  response      bytea NOT NULL,
  create_time   timestamptz NOT NULL DEFAULT now()
);
