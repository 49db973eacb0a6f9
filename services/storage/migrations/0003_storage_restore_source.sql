-- A storage restored from a snapshot remembers which (the source storage's storage_uid and the
-- snapshot's id) while it is CREATING, so a create cut short by a crash is finished by
-- restoring that snapshot, not by making an empty volume. NULL: an empty storage. Expand-only.
ALTER TABLE storage.storages ADD COLUMN source_uid text;
ALTER TABLE storage.storages ADD COLUMN source_snapshot_id text;
