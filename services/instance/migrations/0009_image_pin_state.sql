-- Images are pinned in the background (issue 32: a slow registry holds nothing shared): a
-- create stores the image PENDING and answers; a worker asks the registry and makes it READY
-- (oci_digest_reference set) or FAILED (pin_failure: one of a few fixed messages, never
-- anything the registry sent). Images stored before were pinned at create: READY.
ALTER TABLE instance.images
  ADD COLUMN pin_state text NOT NULL DEFAULT 'READY'
    CHECK (pin_state IN ('PENDING', 'READY', 'FAILED')),
  ADD COLUMN pin_failure text NOT NULL DEFAULT '';
-- The worker's queue after a restart.
CREATE INDEX images_pending ON instance.images (tenant_id) WHERE pin_state = 'PENDING';
