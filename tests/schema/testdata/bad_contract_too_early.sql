-- contract: HEAD drops instances.message: the release being built stopped using it, but the
-- previous one, which still runs during the rollout, did not.
ALTER TABLE instance.instances DROP COLUMN message;
