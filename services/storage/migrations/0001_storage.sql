-- Storage specs: platform resources. Sizes are kept as exact integers and shown in their
-- canonical Kubernetes form.
CREATE TABLE storage.specs (
  spec_name                text PRIMARY KEY,
  size_bytes               bigint NOT NULL CHECK (size_bytes > 0),
  max_files                bigint NOT NULL CHECK (max_files > 0),
  price_per_gb_hour_micros bigint NOT NULL CHECK (price_per_gb_hour_micros >= 0),
  backend_class            text NOT NULL,
  description              text NOT NULL DEFAULT '',
  create_time              timestamptz NOT NULL DEFAULT now(),
  update_time              timestamptz NOT NULL DEFAULT now()
);

-- Storages: tenant-owned volumes. state holds StorageState numbers (1 CREATING, 2 READY,
-- 3 DELETING). size_bytes and max_files are copied from the spec, so a quota sum reads one
-- table. request_hash fingerprints the create request, for retries keyed by storage_id.
CREATE TABLE storage.storages (
  storage_id    text PRIMARY KEY,
  tenant_id     text NOT NULL,
  name          text NOT NULL DEFAULT '',
  spec_name     text NOT NULL REFERENCES storage.specs (spec_name),
  backend_class text NOT NULL,
  size_bytes    bigint NOT NULL CHECK (size_bytes > 0),
  max_files     bigint NOT NULL CHECK (max_files > 0),
  state         integer NOT NULL CHECK (state BETWEEN 1 AND 3),
  request_hash  text NOT NULL DEFAULT '',
  create_time   timestamptz NOT NULL DEFAULT now(),
  update_time   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX storages_by_tenant ON storage.storages (tenant_id, storage_id);
CREATE INDEX storages_by_spec ON storage.storages (spec_name);
-- Start-up finds interrupted creates and deletes without a scan.
CREATE INDEX storages_unsettled ON storage.storages (state) WHERE state <> 2;

-- Attachments: a storage mounted into an instance on a node. A storage with attachments cannot
-- be deleted (RESTRICT), and at most one of its attachments is read-write.
CREATE TABLE storage.attachments (
  storage_id  text NOT NULL REFERENCES storage.storages (storage_id) ON DELETE RESTRICT,
  instance_id text NOT NULL,
  node_id     text NOT NULL,
  read_only   boolean NOT NULL,
  create_time timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (storage_id, instance_id)
);
CREATE UNIQUE INDEX attachments_one_writer ON storage.attachments (storage_id) WHERE NOT read_only;

-- Accessors: S3 key pairs scoped to one storage. The secret is sealed (AES-256-GCM, key from
-- --secret-key-file, access_key_id as additional data), never stored in plain text.
CREATE TABLE storage.accessors (
  access_key_id text PRIMARY KEY,
  storage_id    text NOT NULL REFERENCES storage.storages (storage_id) ON DELETE CASCADE,
  tenant_id     text NOT NULL,
  read_only     boolean NOT NULL,
  description   text NOT NULL DEFAULT '',
  creator       text NOT NULL,
  secret_sealed bytea NOT NULL,
  expire_time   timestamptz NOT NULL,
  create_time   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX accessors_by_storage ON storage.accessors (storage_id, access_key_id);

-- Idempotency records for libs/service RequestLog (CreateStorage by request_id, CreateAccessor).
CREATE TABLE storage.requests (
  method       text NOT NULL,
  caller       text NOT NULL,
  request_id   text NOT NULL,
  request_hash text NOT NULL DEFAULT '',
  result_id    text NOT NULL,
  create_time  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (method, caller, request_id)
);
