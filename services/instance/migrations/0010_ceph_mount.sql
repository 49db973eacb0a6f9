-- A storage on Ceph (issue 33): what the agent mounts instead of host_path, an
-- instance.v1.CephVolume serialized (monitors, fs, the subvolume's path, the attachment's cephx
-- id). Never its key: the agent fetches that itself from the storage service with its node key.
-- Empty for local storages and when not attached; cleared with host_path.
ALTER TABLE instance.instances ADD COLUMN ceph_mount bytea NOT NULL DEFAULT '';
