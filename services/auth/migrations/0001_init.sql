-- Tenants, users, memberships, API keys, refresh tokens and signing keys.
-- Roles are stored as gpuaas.common.v1.Role numbers (1 VIEWER, 2 MEMBER, 3 TENANT_ADMIN,
-- 4 PLATFORM_ADMIN, 5 SERVICE).

CREATE TABLE auth.tenants (
  tenant_id         text PRIMARY KEY,
  display_name      text NOT NULL DEFAULT '',
  max_gpus          bigint NOT NULL DEFAULT 0 CHECK (max_gpus >= 0),
  max_instances     bigint NOT NULL DEFAULT 0 CHECK (max_instances >= 0),
  max_storage_bytes bigint NOT NULL DEFAULT 0 CHECK (max_storage_bytes >= 0),
  create_time       timestamptz NOT NULL DEFAULT now(),
  update_time       timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE auth.users (
  user_id       text PRIMARY KEY,
  user_name     text NOT NULL UNIQUE,
  display_name  text NOT NULL DEFAULT '',
  password_hash text NOT NULL,
  disabled      boolean NOT NULL DEFAULT false,
  global_role   integer NOT NULL DEFAULT 0 CHECK (global_role IN (0, 4, 5)),
  create_time   timestamptz NOT NULL DEFAULT now(),
  update_time   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE auth.memberships (
  tenant_id   text NOT NULL REFERENCES auth.tenants ON DELETE CASCADE,
  user_id     text NOT NULL REFERENCES auth.users ON DELETE CASCADE,
  role        integer NOT NULL CHECK (role IN (1, 2, 3)),
  create_time timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, user_id)
);
CREATE INDEX memberships_by_user ON auth.memberships (user_id, create_time);

CREATE TABLE auth.api_keys (
  api_key_id   text PRIMARY KEY,
  name         text NOT NULL,
  tenant_id    text REFERENCES auth.tenants ON DELETE CASCADE,
  user_id      text NOT NULL REFERENCES auth.users ON DELETE CASCADE,
  role         integer NOT NULL,
  secret_hash  text NOT NULL,
  create_time  timestamptz NOT NULL DEFAULT now(),
  expire_time  timestamptz,
  revoke_time  timestamptz
);
CREATE INDEX api_keys_by_tenant ON auth.api_keys (tenant_id, api_key_id);

-- One row per issued refresh token. Rotation marks the old row used; presenting a used
-- token again revokes its whole chain (the token was stolen or replayed).
CREATE TABLE auth.refresh_tokens (
  token_id     text PRIMARY KEY,
  chain_id     text NOT NULL,
  user_id      text NOT NULL REFERENCES auth.users ON DELETE CASCADE,
  tenant_id    text,
  secret_hash  text NOT NULL,
  create_time  timestamptz NOT NULL DEFAULT now(),
  expire_time  timestamptz NOT NULL,
  used_time    timestamptz,
  revoke_time  timestamptz
);
CREATE INDEX refresh_tokens_by_chain ON auth.refresh_tokens (chain_id);

-- Ed25519 signing keys. The newest unretired key signs; retired keys stay published until
-- every token they signed has expired.
CREATE TABLE auth.signing_keys (
  kid          text PRIMARY KEY,
  private_key  bytea NOT NULL,
  create_time  timestamptz NOT NULL DEFAULT now(),
  retire_time  timestamptz
);

-- Idempotency records: a create retried with the same request id returns the first result.
CREATE TABLE auth.requests (
  method      text NOT NULL,
  caller      text NOT NULL,
  request_id  text NOT NULL,
  result_id   text NOT NULL,
  create_time timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (method, caller, request_id)
);
