-- GPU specifications. Quantities are kept as exact integers (millicores, bytes) and shown in
-- their canonical Kubernetes form; the request's own spelling is not kept.
CREATE TABLE stock.specs (
  spec_name             text PRIMARY KEY,
  gpu_type              text NOT NULL,
  gpu_num               integer NOT NULL CHECK (gpu_num BETWEEN 1 AND 16),
  gpu_share_milli       integer NOT NULL DEFAULT 0 CHECK (gpu_share_milli BETWEEN 0 AND 999),
  mig_profile           text NOT NULL DEFAULT '',
  cpu_millis            bigint NOT NULL CHECK (cpu_millis > 0),
  memory_bytes          bigint NOT NULL CHECK (memory_bytes > 0),
  disk_bytes            bigint NOT NULL CHECK (disk_bytes > 0),
  price_micros_per_hour bigint NOT NULL CHECK (price_micros_per_hour >= 0),
  currency              text NOT NULL,
  description           text NOT NULL DEFAULT '',
  deprecated            boolean NOT NULL DEFAULT false,
  create_time           timestamptz NOT NULL DEFAULT now(),
  update_time           timestamptz NOT NULL DEFAULT now()
);

-- Idempotency records for libs/service RequestLog (CreateStocks, DeleteStocks).
CREATE TABLE stock.requests (
  method       text NOT NULL,
  caller       text NOT NULL,
  request_id   text NOT NULL,
  request_hash text NOT NULL DEFAULT '',
  result_id    text NOT NULL,
  create_time  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (method, caller, request_id)
);
