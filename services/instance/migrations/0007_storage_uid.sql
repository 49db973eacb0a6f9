-- The identity (storage.v1.Storage.storage_uid) of the storage an instance was created with.
-- Every start attaches that identity, with the instance's tenant, so a storage created later
-- under the same storage_id is never mounted. Empty for instances created before identities:
-- their first attach is checked by tenant alone and binds them to the storage it attached.
ALTER TABLE instance.instances ADD COLUMN storage_uid text NOT NULL DEFAULT '';
