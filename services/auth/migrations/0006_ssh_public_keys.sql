-- Users' OpenSSH public keys (User.ssh_public_keys), canonical, one per line: the auth service
-- validates each (services/auth/ssh_public_key.h), so no line holds a newline or options.
-- Expand-only: older replicas never read it.
ALTER TABLE auth.users ADD COLUMN ssh_public_keys text NOT NULL DEFAULT '';
