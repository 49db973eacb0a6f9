-- One-time access links (GetInstanceAccess): the proxy redeems a code once, on the host of the
-- instance and port it was made for. Only the code's SHA-256 is kept, so the table leaks no
-- usable code; a redeemed or expired row is deleted.
CREATE TABLE instance.access_codes (
  code_hash    bytea PRIMARY KEY,
  instance_id  text NOT NULL,
  tenant_id    text NOT NULL,
  port         integer NOT NULL,
  user_id      text NOT NULL,
  expire_time  timestamptz NOT NULL
);
CREATE INDEX access_codes_expire_time ON instance.access_codes (expire_time);
