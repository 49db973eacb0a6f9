-- OCI images (issue 23). Images belong to the platform's catalog (tenant_id '') or to one
-- tenant, whose name space is its own: the key gains the tenant. An image's oci_reference is
-- pinned by digest at create (oci_digest_reference); a registry login is kept as its user name
-- and, for the password, a serialized gpuaas.instance.v1.RegistryCredentials sealed with the
-- service's --secret-key-file (libs/common/secret_box.h, the image's "<tenant>/<name>:<version>"
-- as additional data), never in plain text.
ALTER TABLE instance.images
  ADD COLUMN tenant_id text NOT NULL DEFAULT '',
  ADD COLUMN oci_digest_reference text NOT NULL DEFAULT '',
  ADD COLUMN registry_username text NOT NULL DEFAULT '',
  ADD COLUMN registry_secret bytea NOT NULL DEFAULT '',
  ADD COLUMN deny_egress boolean NOT NULL DEFAULT false;
ALTER TABLE instance.images DROP CONSTRAINT images_pkey;
ALTER TABLE instance.images ADD PRIMARY KEY (tenant_id, name, version);

-- What an instance copies from its image and spec at create, so every run runs the same bytes
-- under the same limits: the pinned reference, the registry login sealed again for the
-- instance ("instance:<instance_id>" as additional data), the limits (a serialized
-- gpuaas.instance.v1.WorkloadLimits with cpu, memory and disk from the spec) and the egress
-- policy.
ALTER TABLE instance.instances
  ADD COLUMN image_reference text NOT NULL DEFAULT '',
  ADD COLUMN registry_secret bytea NOT NULL DEFAULT '',
  ADD COLUMN limits bytea NOT NULL DEFAULT '',
  ADD COLUMN deny_egress boolean NOT NULL DEFAULT false;
