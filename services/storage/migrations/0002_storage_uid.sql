-- A storage's identity, apart from its reusable storage_id: generated at create ("vol_" and
-- 26 base32 characters) and never given to another storage. Instances bind to it, and the
-- local backend keys a volume's directory by it, so a storage created later under a deleted
-- one's storage_id neither mounts in its place nor sees its bytes. Storages made before this
-- migration keep their storage_id as identity: their directories are already named by it, and
-- no generated identity can equal a storage_id (storage ids never hold '_').
ALTER TABLE storage.storages ADD COLUMN storage_uid text;
UPDATE storage.storages SET storage_uid = storage_id;
ALTER TABLE storage.storages ALTER COLUMN storage_uid SET NOT NULL;
ALTER TABLE storage.storages ADD CONSTRAINT storages_uid_unique UNIQUE (storage_uid);
