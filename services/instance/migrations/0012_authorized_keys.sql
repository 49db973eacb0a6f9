-- The SSH public keys an instance's run trusts (GPUAAS_SSH_AUTHORIZED_KEYS): its tenant's keys
-- (auth's ListAuthorizedKeys) read when the run is published, one per line, so a key added or a
-- member removed takes effect at the next start. Public keys: not a secret.
-- Expand-only: older replicas never read it.
ALTER TABLE instance.instances ADD COLUMN authorized_keys text NOT NULL DEFAULT '';
