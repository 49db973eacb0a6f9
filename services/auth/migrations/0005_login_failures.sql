-- Failed logins and API-key exchanges, counted per client address and per account at a client
-- address (services/auth/login_guard.h), so that every auth replica throttles the same guesser.
-- There is no per-account row: a guesser elsewhere never locks an account's owner out.
-- Expand-only: older replicas never read it.
CREATE TABLE auth.login_failures (
  scope        text NOT NULL CHECK (scope IN ('client', 'user_at_client', 'key_at_client')),
  throttle_key text NOT NULL,
  failures     integer NOT NULL CHECK (failures >= 0),
  last_failure timestamptz NOT NULL,
  locked_until timestamptz NOT NULL,
  PRIMARY KEY (scope, throttle_key)
);
-- Lapsed runs are swept by age.
CREATE INDEX login_failures_by_age ON auth.login_failures (last_failure);
