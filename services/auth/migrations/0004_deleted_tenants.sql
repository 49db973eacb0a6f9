-- A deleted tenant's id is never given to another tenant: the other services keep their rows
-- (instances, storages, images, usage) by tenant id, and access tokens issued for the old tenant
-- live out their lifetime, so a new tenant of that id would inherit both.
CREATE TABLE auth.deleted_tenants (
  tenant_id   text PRIMARY KEY,
  delete_time timestamptz NOT NULL DEFAULT now()
);
