-- Terminals and port-forwards into instances (issue 35): who opened which, when, to do what, and
-- how it ended. Written by the service that relays the session, before the first byte reaches
-- the node, so a session the service could not record never opens.
CREATE TABLE instance.sessions (
  session_id  text PRIMARY KEY,
  instance_id text NOT NULL,
  tenant_id   text NOT NULL,
  -- The caller's user id (a person, or an API key's maker) and address.
  user_id     text NOT NULL,
  peer        text NOT NULL,
  kind        text NOT NULL CHECK (kind IN ('exec', 'port_forward')),
  -- The command as run (arguments joined by spaces, cut at 1000 characters), or the port.
  detail      text NOT NULL,
  node_id     text NOT NULL,
  open_time   timestamptz NOT NULL DEFAULT now(),
  close_time  timestamptz,
  -- "exit 0", or the status code the stream ended with; '' while open.
  outcome     text NOT NULL DEFAULT ''
);
CREATE INDEX sessions_by_instance ON instance.sessions (tenant_id, instance_id, open_time);
